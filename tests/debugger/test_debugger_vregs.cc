// The vector registers in the debugger (issue: YMM state): `print vregs`,
// `print ymmN|xmmN [/x|/f|/d]` and es_dbg_vregs after VEX instructions
// changed them, their change marks, the window's `vregs` setting, and
// reverse execution restoring the upper halves (ymmh lies in the
// architectural region the undo log saves).  The guest is ymm_guest.S
// (built by this directory's CMakeLists.txt).
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "session.h"

namespace {

const char ones[] = "0xffffffffffffffff";
const char zero[] = "0x0000000000000000";

std::string q4(const char *q3, const char *q2, const char *q1, const char *q0)
{
    return std::string(q3) + " " + q2 + " " + q1 + " " + q0;
}

// es_dbg_vregs as (name -> changed) and the values
struct Vregs {
    std::vector<es_dbg_vreg> v;
    explicit Vregs(es_dbg *d) : v(ES_DBG_MAX_VREGS)
    {
        v.resize(es_dbg_vregs(d, v.data(), v.size()));
    }
    std::vector<std::string> changed() const
    {
        std::vector<std::string> c;
        for (const es_dbg_vreg &r : v)
            if (r.changed)
                c.push_back(r.name);
        return c;
    }
};

// The row of `print vregs` output for register `name` ("" when absent).
std::string row_of(const std::string &out, const std::string &name)
{
    size_t at = out.find("\n" + name + " ");
    if (at == std::string::npos)
        return "";
    size_t end = out.find('\n', at + 1);
    return out.substr(at + 1, end - at - 1);
}

#define YMM_SESSION(s)                                                                  \
    Session s(ES_YMM_GUEST, ES_CONV_V417);                                              \
    NEED(s)

TEST(DebuggerVregs, PrintAfterVexInstructionsWithChangeMarks)
{
    YMM_SESSION(s);
    std::string all = s.ok("print vregs");
    EXPECT_EQ(all.rfind("       (q3..q0)\n", 0), 0u) << all;
    EXPECT_NE(row_of(all, "ymm15"), "") << all;
    EXPECT_EQ(all.find('*'), std::string::npos) << "nothing changed yet: " << all;

    s.ok("step"); // vpcmpeqd ymm0, ymm0, ymm0
    EXPECT_EQ(s.ok("print ymm0"), "ymm0 = " + q4(ones, ones, ones, ones) + "  (q3..q0)\n");
    EXPECT_EQ(s.ok("print xmm0"), "xmm0 = " + q4(ones, ones, "", "").substr(0, 37) +
                                      "  (q1..q0)\n");
    all = s.ok("print vregs");
    EXPECT_EQ(row_of(all, "ymm0"), "ymm0   " + q4(ones, ones, ones, ones) + " *");
    EXPECT_EQ(row_of(all, "ymm1").find('*'), std::string::npos) << all;
    EXPECT_EQ(Vregs(s.d).changed(), std::vector<std::string>{"ymm0"});

    s.ok("step"); // lea: no vector register changes, the mark goes
    EXPECT_TRUE(Vregs(s.d).changed().empty());
    s.ok("step"); // vmovups ymm1, [values]
    EXPECT_EQ(Vregs(s.d).changed(), std::vector<std::string>{"ymm1"});
    EXPECT_EQ(s.ok("print ymm1 /f"), "ymm1 = 8 7 6 5 4 3 2 1  (f7..f0)\n");
    EXPECT_EQ(s.ok("print xmm1 /f"), "xmm1 = 4 3 2 1  (f3..f0)\n");
    EXPECT_EQ(s.ok("print ymm1 /x"),
              "ymm1 = 0x4100000040e00000 0x40c0000040a00000 0x4080000040400000 "
              "0x400000003f800000  (q3..q0)\n");
    EXPECT_EQ(s.ok("print xmm1 double"),
              "xmm1 = 512.00012254714966 2.0000004731118679  (d1..d0)\n");
    std::string f = s.ok("print vregs /f");
    EXPECT_EQ(f.rfind("       (f7..f0)\n", 0), 0u) << f;
    EXPECT_EQ(row_of(f, "ymm1").find("ymm1                 8               7 "), 0u) << f;
    EXPECT_EQ(row_of(f, "ymm1").back(), '*') << f;

    s.ok("step"); // vzeroupper: the upper halves of ymm0 and ymm1 go
    EXPECT_EQ((Vregs(s.d).changed()), (std::vector<std::string>{"ymm0", "ymm1"}));
    EXPECT_EQ(s.ok("print ymm0"), "ymm0 = " + q4(zero, zero, ones, ones) + "  (q3..q0)\n");
    EXPECT_EQ(s.ok("print ymm1 /f"), "ymm1 = 0 0 0 0 4 3 2 1  (f7..f0)\n");

    // one step back: the upper halves are there again, and marked (the
    // reverse changed them)
    s.ok("reverse");
    EXPECT_EQ(s.ok("print ymm0"), "ymm0 = " + q4(ones, ones, ones, ones) + "  (q3..q0)\n");
    EXPECT_EQ(s.ok("print ymm1 /f"), "ymm1 = 8 7 6 5 4 3 2 1  (f7..f0)\n");
    EXPECT_EQ((Vregs(s.d).changed()), (std::vector<std::string>{"ymm0", "ymm1"}));
    es_machine *m = s.m();
    EXPECT_EQ(m->ymmh[0].q[0], ~0ull);
    EXPECT_EQ(m->ymmh[0].q[1], ~0ull);
    EXPECT_EQ(m->ymmh[1].f[3], 8.0f);
}

TEST(DebuggerVregs, ReverseIntoARunAndAcrossTheKernelRestoresYmm)
{
    YMM_SESSION(s);
    Vregs start(s.d);
    s.ok("break upper_cleared");
    s.ok("break after_getpid");
    // user code up to here ran unobserved, as one undo record
    std::string out = s.ok("continue");
    EXPECT_NE(out.find("[breakpoint 1]"), std::string::npos) << out;
    es_machine *m = s.m();
    for (int i = 0; i < 16; i++)
        EXPECT_EQ(m->ymmh[i].q[0] | m->ymmh[i].q[1], 0u) << "ymm" << i << " after vzeroupper";
    // reverse steps into that record: it runs again up to the vzeroupper
    s.ok("reverse");
    EXPECT_EQ(s.ok("print ymm0"), "ymm0 = " + q4(ones, ones, ones, ones) + "  (q3..q0)\n");
    EXPECT_EQ(s.ok("print ymm1 /f"), "ymm1 = 8 7 6 5 4 3 2 1  (f7..f0)\n");

    // through getpid in the kernel (recorded one instruction at a time),
    // then the vinsertf128 after it
    s.ok("continue");
    s.ok("continue");
    out = s.ok("step");
    EXPECT_EQ(s.ok("print ymm2"), "ymm2 = " +
                                      q4(ones, ones, "0x4080000040400000", "0x400000003f800000") +
                                      "  (q3..q0)\n");
    EXPECT_EQ(Vregs(s.d).changed(), std::vector<std::string>{"ymm2"});
    s.ok("reverse");
    EXPECT_EQ(m->ymmh[2].q[0] | m->ymmh[2].q[1], 0u);
    s.ok("reverse 30"); // back into the kernel's return path
    EXPECT_EQ(m->cpl, 0);
    EXPECT_EQ(s.ok("print ymm0"), "ymm0 = " + q4(zero, zero, ones, ones) + "  (q3..q0)\n");

    // all the way back: the state the program started with
    s.ok("delete 1");
    s.ok("delete 2");
    out = s.ok("rcontinue");
    EXPECT_NE(out.find("[history-end]"), std::string::npos) << out;
    Vregs back(s.d);
    ASSERT_EQ(back.v.size(), start.v.size());
    for (size_t i = 0; i < back.v.size(); i++)
        EXPECT_EQ(memcmp(&back.v[i].value, &start.v[i].value, sizeof(es_ymm)), 0) << i;
}

TEST(DebuggerVregs, PanelSettingAndBadInput)
{
    YMM_SESSION(s);
    EXPECT_EQ(es_dbg_vregs_view(s.d), ES_DBG_VF_OFF);
    EXPECT_EQ(s.ok("vregs"), "vector registers shown as hex\n");
    EXPECT_EQ(es_dbg_vregs_view(s.d), ES_DBG_VF_HEX);
    EXPECT_EQ(s.ok("vregs"), "vector registers hidden\n");
    EXPECT_EQ(es_dbg_vregs_view(s.d), ES_DBG_VF_OFF);
    s.ok("vregs float");
    EXPECT_EQ(es_dbg_vregs_view(s.d), ES_DBG_VF_FLOAT);
    s.ok("restart"); // a view setting, kept as the syntax is
    EXPECT_EQ(es_dbg_vregs_view(s.d), ES_DBG_VF_FLOAT);
    s.ok("vregs off");
    EXPECT_EQ(es_dbg_vregs_view(s.d), ES_DBG_VF_OFF);

    int rc;
    std::string e = s.exec("vregs sideways", &rc);
    EXPECT_EQ(rc, ES_DBG_CMD_ERROR);
    EXPECT_EQ(e, "error: vregs [off|hex|float|double]\n");
    for (const char *bad : {"print ymm16", "print xmm99", "print ymm", "print ymm0 /z",
                            "print ymm0 /f extra", "print vregs /q", "print rdi /f",
                            "vregs hex float"}) {
        e = s.exec(bad, &rc);
        EXPECT_EQ(rc, ES_DBG_CMD_ERROR) << bad << ": " << e;
        EXPECT_EQ(e.rfind("error: ", 0), 0u) << bad << ": " << e;
    }
    EXPECT_NE(s.exec("print ymm0 /z").find("the formats are /x|/f|/d"), std::string::npos);

    // help lists both from the same tables
    std::string h = s.ok("help");
    EXPECT_NE(h.find("vregs [off|hex|float|double]"), std::string::npos) << h;
    EXPECT_NE(h.find("print REG|ymmN|xmmN [/x|/f|/d]|"), std::string::npos) << h;
    EXPECT_NE(h.find("|vregs [/x|/f|/d]"), std::string::npos) << h;
}

// A 32-bit program in compat mode reaches ymm0-7 only; in the kernel
// (64-bit mode) all 16 are listed again.
TEST(DebuggerVregs, CompatModeListsEight)
{
    Session s("i386_glibc_v3_compute", ES_CONV_V417);
    NEED(s);
    EXPECT_EQ(Vregs(s.d).v.size(), 8u);
    std::string all = s.ok("print vregs");
    EXPECT_NE(row_of(all, "ymm7"), "") << all;
    EXPECT_EQ(row_of(all, "ymm8"), "") << all;
    int rc;
    std::string e = s.exec("print ymm8", &rc);
    EXPECT_EQ(rc, ES_DBG_CMD_ERROR);
    EXPECT_EQ(e, "error: ymm8: compat mode has ymm0-7 only\n");
    s.ok("print xmm7 /f");
    s.ok("kentry");
    EXPECT_EQ(Vregs(s.d).v.size(), 16u);
    s.ok("print ymm15");
}

} // namespace
