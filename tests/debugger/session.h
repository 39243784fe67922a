// session.h - the debugger tests' scripted session on a guest program
// (split from test_debugger.cc; test_debugger_script.cc uses it too).
#ifndef ENTRYSIM_TESTS_DEBUGGER_SESSION_H
#define ENTRYSIM_TESTS_DEBUGGER_SESSION_H

#include <gtest/gtest.h>
#include <algorithm>
#include <fstream>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>
#include <sys/stat.h>
#include <unistd.h>
#include "build_path.h"
#include "dbg.h"
#include "kernel.h"
#include "mitigations.h"

namespace {


// a program of guest/ by name, or one the tests built themselves by path
std::string guest_path(const char *name)
{
    return name[0] == '/' ? std::string(name) : es_build_path(std::string("guest/") + name);
}

struct Session {
    es_dbg *d = nullptr;
    std::string path, kdir, arg;
    std::string error;
    // kernel_dir: a built kernel tree (guest/spectre_kernel), speculate:
    // the cycle model with wrong paths
    Session(const char *guest, unsigned patches, bool taint = true, const char *kernel_dir = nullptr,
            bool speculate = false)
    {
        path = guest_path(guest);
        kdir = kernel_dir ? guest_path(kernel_dir) : "";
        es_dbg_cfg c{};
        c.launch.kernel_dir = kernel_dir ? kdir.c_str() : nullptr;
        c.uarch = speculate ? "znver4" : nullptr;
        c.speculate = speculate;
        c.launch.patches = patches;
        c.no_taint = !taint;
        open(c);
    }
    // a program with one argument under v4.17; step_only: every instruction
    // its own undo record (es_dbg_cfg.step_only)
    Session(const char *guest, const char *arg, bool step_only, uint64_t undo_insns = 0)
    {
        path = guest_path(guest);
        this->arg = arg;
        es_dbg_cfg c{};
        const char *argv[] = {path.c_str(), this->arg.c_str(), nullptr};
        c.launch.argv = const_cast<char **>(argv);
        c.launch.argc = 2;
        c.launch.patches = ES_CONV_V417;
        c.step_only = step_only;
        c.undo_insns = undo_insns;
        open(c); // es_dbg_new copies argv
    }
    void open(es_dbg_cfg &c)
    {
        c.launch.program = path.c_str();
        c.launch.root = "/";
        c.launch.deterministic = true;
        c.launch.mitigations = ES_MIT_DEFAULT;
        c.launch.stdin_fd = -1;
        char err[320] = "";
        d = es_dbg_new(&c, err, sizeof err);
        error = err;
    }
    ~Session() { es_dbg_free(d); }
    es_machine *m() { return es_dbg_machine(d); }
    // runs one command; returns its output, status in *rc
    std::string exec(const char *line, int *rc = nullptr)
    {
        char *buf = nullptr;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        int r = es_dbg_exec(d, line, f);
        fclose(f);
        std::string s(buf, len);
        free(buf);
        if (rc)
            *rc = r;
        return s;
    }
    std::string ok(const char *line)
    {
        int rc = -1;
        std::string s = exec(line, &rc);
        EXPECT_EQ(rc, ES_DBG_CMD_OK) << line << ": " << s;
        return s;
    }
    const es_dbg_slot *slots()
    {
        static es_dbg_slot s[ES_DBG_PTREGS_SLOTS];
        uint64_t base;
        EXPECT_EQ(es_dbg_ptregs(d, &base, s), 0);
        return s;
    }
    es_label reg_taint(int r) { return es_taint_reg(es_dbg_taint(d), r); }
};

#define NEED(s)                                                                         \
    do {                                                                                \
        if (!(s).d) {                                                                   \
            if (access((s).path.c_str(), R_OK) != 0)                                    \
                GTEST_SKIP() << (s).path << " not built";                               \
            FAIL() << (s).error;                                                        \
        }                                                                               \
    } while (0)

} // namespace

#endif
