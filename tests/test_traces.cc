// The two traces of `entrysim run` (issue 17, "Traces"): the Kanata
// pipeline log (--pipetrace) checked by a parser of the format written
// here from its specification (Konata's docs/kanata-log-format.md), and
// the Chrome Trace Event JSON (--trace-json) checked by a minimal JSON
// parser and against the --timing-json report of the same run.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

const std::string kBuild = ES_BUILD_DIR;

std::string tmp(const std::string &what)
{
    return "/tmp/es_traces_" + std::to_string(getpid()) + "_" + what;
}

// Runs entrysim with args; returns its exit status (-1 if it did not exit).
int entrysim(const std::string &args)
{
    std::string cmd = kBuild + "/entrysim " + args + " >/dev/null 2>&1";
    int rc = std::system(cmd.c_str());
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

std::string slurp(const std::string &path)
{
    std::ifstream f(path);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

std::string guest() { return kBuild + "/guest/asm_getpid"; }

// ---- a Kanata parser (version 0004) ----

struct KStage {
    std::string name;
    std::string lane;
    uint64_t start = 0, end = 0;
    bool ended = false;
};

struct KInsn {
    std::string label0, label1;
    std::vector<KStage> stages;
    int retires = 0, flushes = 0;
};

struct Kanata {
    std::vector<KInsn> insns;
    size_t lines = 0;
    std::string error; // empty: the log follows the format
};

std::vector<std::string> split_tabs(const std::string &l)
{
    std::vector<std::string> v;
    std::istringstream in(l);
    std::string field;
    while (std::getline(in, field, '\t'))
        v.push_back(field);
    if (l.empty() || l.back() == '\t')
        v.push_back("");
    return v;
}

bool number(const std::string &s, uint64_t *out)
{
    if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos)
        return false;
    *out = std::stoull(s);
    return true;
}

// One body line at cycle `cyc`; returns an error or "".
std::string kanata_line(Kanata &k, const std::vector<std::string> &a, uint64_t &cyc)
{
    uint64_t id = 0, n = 0;
    if (a[0] == "C")
        return a.size() == 2 && number(a[1], &n) && n > 0 ? (cyc += n, "") : "C needs a step > 0";
    if (a.size() != 4 || !number(a[1], &id))
        return "malformed " + a[0];
    if (a[0] == "I")
        return id == k.insns.size() ? (k.insns.emplace_back(), "") : "I ids not sequential";
    if (id >= k.insns.size())
        return a[0] + " before I";
    KInsn &in = k.insns[id];
    if (in.retires + in.flushes)
        return a[0] + " after R";
    if (a[0] == "L") {
        (a[2] == "0" ? in.label0 : in.label1) += a[3];
        return a[2] == "0" || a[2] == "1" ? "" : "L type";
    }
    if (a[0] == "S") {
        for (const KStage &s : in.stages)
            if (!s.ended && s.name == a[3] && s.lane == a[2])
                return "S of a stage already open";
        in.stages.push_back({a[3], a[2], cyc, 0, false});
        return "";
    }
    if (a[0] == "E") {
        for (KStage &s : in.stages)
            if (!s.ended && s.name == a[3] && s.lane == a[2]) {
                s.ended = true, s.end = cyc;
                return "";
            }
        return "E without S";
    }
    if (a[0] == "R") {
        for (const KStage &s : in.stages)
            if (!s.ended)
                return "R with stage " + s.name + " open";
        (a[3] == "0" ? in.retires : in.flushes)++;
        return a[3] == "0" || a[3] == "1" ? "" : "R type";
    }
    return "unknown command " + a[0];
}

Kanata parse_kanata(const std::string &text)
{
    Kanata k;
    std::istringstream in(text);
    std::string l;
    uint64_t cyc = 0;
    if (!std::getline(in, l) || l != "Kanata\t0004")
        return k.error = "header", k;
    if (!std::getline(in, l) || l.rfind("C=\t", 0) != 0 || !number(l.substr(3), &cyc))
        return k.error = "C= line", k;
    k.lines = 2;
    while (std::getline(in, l)) {
        k.lines++;
        std::string e = kanata_line(k, split_tabs(l), cyc);
        if (!e.empty())
            return k.error = "line " + std::to_string(k.lines) + ": " + e + ": " + l, k;
    }
    for (size_t i = 0; i < k.insns.size(); i++) {
        const KInsn &n = k.insns[i];
        if (n.retires + n.flushes != 1)
            return k.error = "instruction " + std::to_string(i) + " not ended once", k;
        if (n.label0.empty())
            return k.error = "instruction " + std::to_string(i) + " without a label", k;
    }
    return k;
}

// Lane 0 of a retired instruction: F, Dc or Uc, Ds, X, Cm, back to back.
std::string lane0_in_order(const KInsn &n)
{
    std::vector<const KStage *> l0;
    for (const KStage &s : n.stages)
        if (s.lane == "0")
            l0.push_back(&s);
    static const char *const want[] = {"F", "D", "Ds", "X", "Cm"};
    if (l0.size() != 5)
        return "lane 0 has " + std::to_string(l0.size()) + " stages";
    for (size_t i = 0; i < 5; i++) {
        const std::string &nm = l0[i]->name;
        bool ok = i == 1 ? (nm == "Dc" || nm == "Uc") : nm == want[i];
        if (!ok || l0[i]->end < l0[i]->start || (i && l0[i]->start != l0[i - 1]->end))
            return "stage " + nm + " out of order";
    }
    return "";
}

// ---- the pipeline trace ----

// Runs asm_getpid with --pipetrace and the range options `range`; the
// parsed log (error "run failed" when entrysim did not exit 0).
Kanata pipetrace(const std::string &range)
{
    std::string f = tmp("run.kanata");
    Kanata k;
    if (entrysim("run --pipetrace " + f + " " + range + " " + guest()) != 0)
        return k.error = "run failed", k;
    k = parse_kanata(slurp(f));
    unlink(f.c_str());
    return k;
}

TEST(Traces, PipetraceOfOneGetpidEntry)
{
    Kanata k = pipetrace("--pipetrace-syscall getpid:2 --pipetrace-insns 150");
    ASSERT_EQ(k.error, "");
    ASSERT_EQ(k.insns.size(), 150u);
    EXPECT_LT(k.lines, 3000u);
    for (size_t i = 0; i < k.insns.size(); i++) {
        if (k.insns[i].retires) {
            EXPECT_EQ(lane0_in_order(k.insns[i]), "") << "instruction " << i;
        }
    }
    // the trace starts at the second getpid's SYSCALL; the kernel's first
    // instruction is entry_SYSCALL_64's swapgs (arch/x86/entry/entry_64.S)
    EXPECT_NE(k.insns[0].label0.find("syscall"), std::string::npos) << k.insns[0].label0;
    EXPECT_NE(k.insns[1].label0.find("<entry_SYSCALL_64>: swapgs"), std::string::npos)
        << k.insns[1].label0;
    bool body = false, sysret = false;
    for (const KInsn &n : k.insns) {
        body |= n.label0.find("__do_sys_getpid") != std::string::npos;
        sysret |= n.label0.find("sysret") != std::string::npos;
        EXPECT_NE(n.label1.find("retire"), std::string::npos);
    }
    EXPECT_TRUE(body);
    EXPECT_TRUE(sysret);
}

TEST(Traces, PipetraceFromSymbol)
{
    Kanata k = pipetrace("--pipetrace-from entry_SYSCALL_64 --pipetrace-insns 40");
    ASSERT_EQ(k.error, "");
    ASSERT_EQ(k.insns.size(), 40u);
    EXPECT_NE(k.insns[0].label0.find("<entry_SYSCALL_64>: swapgs"), std::string::npos)
        << k.insns[0].label0;
    // some uop went to a named port in lane 1
    bool port = false;
    for (const KInsn &n : k.insns)
        for (const KStage &s : n.stages)
            port |= s.lane == "1" && !s.name.empty();
    EXPECT_TRUE(port);
}

TEST(Traces, PipetraceUsageErrors)
{
    std::string f = tmp("bad.kanata");
    EXPECT_EQ(entrysim("run --pipetrace-insns 5 " + guest()), 2);
    EXPECT_EQ(entrysim("run --pipetrace " + f + " --pipetrace-syscall nosuchcall " + guest()), 2);
    EXPECT_EQ(entrysim("run --pipetrace " + f + " --pipetrace-from no_such_symbol " + guest()), 2);
    EXPECT_EQ(entrysim("run --pipetrace " + f + " --pipetrace-from entry_SYSCALL_64 "
                       "--pipetrace-syscall getpid " + guest()),
              2);
    unlink(f.c_str());
}

// ---- a minimal JSON parser (RFC 8259; numbers kept as their text) ----

struct JV {
    char type = 0; // 'o' object, 'a' array, 's' string, 'n' number, 'b' bool, 'z' null
    std::string s;
    std::vector<JV> a;
    std::vector<std::pair<std::string, JV>> o;
    const JV *get(const std::string &k) const
    {
        for (const auto &p : o)
            if (p.first == k)
                return &p.second;
        return nullptr;
    }
};

struct JP {
    const std::string &t;
    size_t i = 0;
    bool ok = true;
    void ws()
    {
        while (i < t.size() && (t[i] == ' ' || t[i] == '\n' || t[i] == '\t' || t[i] == '\r'))
            i++;
    }
    bool eat(char c) { return ws(), i < t.size() && t[i] == c ? (i++, true) : false; }
    std::string str()
    {
        std::string r;
        if (!eat('"'))
            return ok = false, r;
        while (i < t.size() && t[i] != '"') {
            if ((unsigned char)t[i] < 0x20)
                return ok = false, r;
            if (t[i] == '\\') {
                i++;
                if (i < t.size() && t[i] == 'u')
                    i += 4, r += '?';
                else if (i < t.size() && std::string("\"\\/bfnrt").find(t[i]) != std::string::npos)
                    r += t[i];
                else
                    ok = false;
                i++;
                continue;
            }
            r += t[i++];
        }
        ok = ok && eat('"');
        return r;
    }
    JV value()
    {
        JV v;
        ws();
        if (i >= t.size())
            return ok = false, v;
        char c = t[i];
        if (c == '{') {
            v.type = 'o', i++;
            if (eat('}'))
                return v;
            do {
                std::string k = str();
                ok = ok && eat(':');
                v.o.emplace_back(k, value());
            } while (ok && eat(','));
            ok = ok && eat('}');
        } else if (c == '[') {
            v.type = 'a', i++;
            if (eat(']'))
                return v;
            do
                v.a.push_back(value());
            while (ok && eat(','));
            ok = ok && eat(']');
        } else if (c == '"') {
            v.type = 's', v.s = str();
        } else if (!t.compare(i, 4, "true") || !t.compare(i, 5, "false") ||
                   !t.compare(i, 4, "null")) {
            v.type = c == 'n' ? 'z' : 'b', v.s = c == 't' ? "true" : "false";
            i += c == 'f' ? 5 : 4;
        } else {
            size_t e = t.find_first_not_of("-+.eE0123456789", i);
            v.type = 'n', v.s = t.substr(i, e - i);
            ok = ok && e > i && (isdigit((unsigned char)v.s.back()) != 0);
            i = e;
        }
        return v;
    }
};

bool parse_json(const std::string &text, JV *out)
{
    JP p{text};
    *out = p.value();
    p.ws();
    return p.ok && p.i == text.size();
}

// "123.456" (cycles / 1000, three decimals) -> 123456 cycles.
uint64_t cycles_of(const JV *v)
{
    if (!v || v->type != 'n')
        return UINT64_MAX;
    size_t dot = v->s.find('.');
    if (dot == std::string::npos || v->s.size() - dot != 4)
        return UINT64_MAX;
    return std::stoull(v->s.substr(0, dot)) * 1000 + std::stoull(v->s.substr(dot + 1));
}

// ---- the Chrome trace ----

struct Slice {
    std::string name, cat;
    uint64_t ts, dur;
    std::vector<Slice> phases; // a call's: the phase slices written after it
};

// The X slices of the trace (calls with their phases) and the number of
// IPC counter events; false when an event lacks what the format requires.
bool read_trace(const JV &trace, std::vector<Slice> *calls, size_t *ipc)
{
    const JV *ev = trace.get("traceEvents");
    if (!ev || ev->type != 'a' || !trace.get("displayTimeUnit") || !trace.get("otherData"))
        return false;
    for (const JV &e : ev->a) {
        const JV *ph = e.get("ph"), *name = e.get("name");
        if (!ph || ph->type != 's' || !e.get("pid") || !name)
            return false;
        if (ph->s == "C" && name->s == "IPC" && e.get("args") && e.get("args")->get("ipc"))
            ++*ipc;
        if (ph->s != "X")
            continue;
        Slice s{name->s, e.get("cat")->s, cycles_of(e.get("ts")), cycles_of(e.get("dur")), {}};
        if (s.ts == UINT64_MAX || s.dur == UINT64_MAX)
            return false;
        if (s.cat == "syscall")
            calls->push_back(s);
        else if (s.cat == "phase" && !calls->empty())
            calls->back().phases.push_back(s);
        else if (s.cat == "phase")
            return false;
    }
    return true;
}

TEST(Traces, TraceJsonSlicesMatchThePhaseReport)
{
    std::string j = tmp("trace.json"), r = tmp("report.json");
    ASSERT_EQ(entrysim("run --trace-json " + j + " --timing-json " + r + " " + guest()), 0);
    JV trace, report;
    ASSERT_TRUE(parse_json(slurp(j), &trace)) << "not JSON";
    ASSERT_TRUE(parse_json(slurp(r), &report));
    unlink(j.c_str());
    unlink(r.c_str());
    std::vector<Slice> calls;
    size_t ipc = 0;
    ASSERT_TRUE(read_trace(trace, &calls, &ipc));
    // the report's rows: 3 getpid + 1 exit_group
    std::map<std::string, uint64_t> want;
    uint64_t count = 0;
    for (const JV &row : report.get("per_syscall")->a) {
        want[row.get("entry")->s + " " + row.get("name")->s] += std::stoull(row.get("cycles")->s);
        count += std::stoull(row.get("count")->s);
    }
    ASSERT_EQ(count, 4u);
    ASSERT_EQ(calls.size(), count);
    EXPECT_GE(ipc, calls.size());
    std::map<std::string, uint64_t> got;
    for (const Slice &c : calls) {
        uint64_t sum = 0;
        std::set<std::string> names;
        for (const Slice &p : c.phases) {
            EXPECT_TRUE(p.ts >= c.ts && p.ts + p.dur <= c.ts + c.dur) << c.name << " " << p.name;
            sum += p.dur;
            names.insert(p.name);
        }
        EXPECT_EQ(sum, c.dur) << c.name;
        if (c.name == "syscall64 getpid") {
            EXPECT_EQ(names.size(), 7u) << c.name;
        }
        got[c.name] += c.dur;
    }
    EXPECT_EQ(got, want);
    EXPECT_GT(got["syscall64 getpid"], 0u);
}

} // namespace
