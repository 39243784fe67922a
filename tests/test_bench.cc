// test_bench.cc - `entrysim bench` (bench/): the matrix format and its
// errors, the cross product and impossible cells, the report reader, and
// whole runs through the fake runner (tests/bench/fake_runner.c) and the
// real entrysim: outputs, resume, failures, timeouts, determinism.
#include <gtest/gtest.h>

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "bench.h"
#include "bench_test_util.h"

namespace {

std::vector<std::string> lines(const std::string &text)
{
    std::vector<std::string> out;
    std::stringstream ss(text);
    for (std::string l; std::getline(ss, l);)
        out.push_back(l);
    return out;
}

std::vector<std::string> split(const std::string &s, char sep)
{
    std::vector<std::string> out;
    std::string cur;
    for (char c : s) {
        if (c == sep) {
            out.push_back(cur);
            cur.clear();
        } else {
            cur += c;
        }
    }
    out.push_back(cur);
    return out;
}

size_t count(const std::string &hay, const std::string &needle)
{
    size_t n = 0;
    for (size_t p = hay.find(needle); p != std::string::npos; p = hay.find(needle, p + 1))
        n++;
    return n;
}

// Parses a matrix; returns "" or the error.
std::string parse_err(const std::string &text)
{
    es_matrix m;
    char err[512];
    if (es_matrix_parse(text.c_str(), "m.toml", &m, err, sizeof err))
        return err;
    es_matrix_free(&m);
    return "";
}

class BenchRun : public ::testing::Test {
  protected:
    std::string dir;
    void SetUp() override
    {
        char tmpl[] = "/tmp/es_test_bench_XXXXXX";
        ASSERT_NE(mkdtemp(tmpl), nullptr);
        dir = tmpl;
    }
    void TearDown() override
    {
        if (!HasFailure())
            (void)!system(("rm -rf " + dir).c_str());
    }
    // `entrysim bench --matrix M --out OUT OPTS` with ENV; returns the exit
    // status, stderr in err_text.
    std::string err_text;
    int bench(const std::string &matrix, const std::string &out, const std::string &opts,
              const std::string &env = "")
    {
        std::string cmd = env + " " ES_TEST_ENTRYSIM " bench --matrix " + matrix + " --out " +
                          out + " --workloads " ES_TEST_WORKLOADS " " + opts + " 2>" + dir +
                          "/stderr >" + dir + "/stdout";
        int st = system(cmd.c_str());
        err_text = slurp(dir + "/stderr");
        return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    }
    int fake(const std::string &matrix, const std::string &out, const std::string &env = "",
             const std::string &opts = "")
    {
        return bench(matrix, out, "--runner " ES_TEST_FAKE_RUNNER " " + opts,
                     "FAKE_RUNNER_LOG=" + dir + "/runner.log " + env);
    }
    size_t runner_calls() { return lines(slurp(dir + "/runner.log")).size(); }
};

const char *small_matrix = R"(# a small matrix
[matrix]
name = "small"
kernels = ["v4.16", "dfe6450", "v4.17"]
entries = ["syscall64", "sysenter32", "syscall32"]
cpu = ["intel", "amd"]
syscalls = ["getpid"]
iterations = 20
)";
// 3 kernels x (syscall64 x 2 cpus + sysenter32 on intel + syscall32 on amd)
const size_t small_cells = 3 * 4, small_skipped = 3 * 2;

std::map<std::string, std::string> csv_row(const std::vector<std::string> &header,
                                           const std::string &line)
{
    std::map<std::string, std::string> r;
    auto f = split(line, ',');
    for (size_t i = 0; i < header.size() && i < f.size(); i++)
        r[header[i]] = f[i];
    return r;
}

} // namespace

TEST(BenchToml, AcceptsTheSubset)
{
    es_toml t;
    char err[256];
    const char *text = "top = 1 # comment\n"
                       "[matrix]\n"
                       "s = \"a \\\"q\\\" \\\\ b\"\n"
                       "i = -42\n"
                       "yes = true\n"
                       "no = false\n"
                       "arr = [\"x\",\n"
                       "   # inside\n"
                       "   \"y\",  ]\n"
                       "empty = []\n"
                       "[workload.w-1]\n"
                       "k = \"v\"\n";
    ASSERT_EQ(es_toml_parse(text, &t, err, sizeof err), 0) << err;
    EXPECT_EQ(es_toml_get(&t, "", "top")->i, 1);
    EXPECT_STREQ(es_toml_get(&t, "matrix", "s")->str, "a \"q\" \\ b");
    EXPECT_EQ(es_toml_get(&t, "matrix", "i")->i, -42);
    EXPECT_EQ(es_toml_get(&t, "matrix", "yes")->type, ES_TV_BOOL);
    EXPECT_EQ(es_toml_get(&t, "matrix", "yes")->i, 1);
    EXPECT_EQ(es_toml_get(&t, "matrix", "no")->i, 0);
    es_tkey *a = es_toml_get(&t, "matrix", "arr");
    ASSERT_EQ(a->narr, 2u);
    EXPECT_STREQ(a->arr[1], "y");
    EXPECT_EQ(a->line, 7);
    EXPECT_EQ(es_toml_get(&t, "matrix", "empty")->narr, 0u);
    EXPECT_STREQ(es_toml_get(&t, "workload.w-1", "k")->str, "v");
    EXPECT_EQ(es_toml_get(&t, "matrix", "k"), nullptr);
    EXPECT_EQ(t.ntables, 2u);
    es_toml_free(&t);
}

TEST(BenchToml, ErrorsNameTheLine)
{
    const std::pair<const char *, const char *> bad[] = {
        {"a = 1\nb = \"open\n", "2: unterminated string"},
        {"a = 1.5\n", "1: only decimal integers"},
        {"\n\nx = {a = 1}\n", "3: expected a value"},
        {"[m]\na = 1\na = 2\n", "3: key 'a' defined twice (first on line 2)"},
        {"[m]\n[m]\n", "2: table [m] defined twice"},
        {"[[m]]\n", "1: arrays of tables"},
        {"a = 'lit'\n", "1: literal"},
        {"a = [1, 2]\n", "1: arrays may hold only"},
        {"a = [\"x\"\n\"y\"]\n", "2: expected ',' or ']'"},
        {"a = [\"x\",\n", "unterminated array"},
        {"a.b = 1\n", "1: expected '='"},
        {"a = 1 b\n", "1: unexpected 'b'"},
        {"= 3\n", "1: expected a bare key"},
        {"a = \"\\x\"\n", "1: unsupported escape"},
        {"[m\n", "1: expected ']'"},
        {"a = 99999999999999999999\n", "1: integer too large"},
        {"a\n", "1: expected '='"},
    };
    for (auto &b : bad) {
        es_toml t;
        char err[256] = "";
        EXPECT_EQ(es_toml_parse(b.first, &t, err, sizeof err), -1) << b.first;
        EXPECT_NE(std::string(err).find(b.second), std::string::npos)
            << "input: " << b.first << "\nerror: " << err;
    }
}

TEST(BenchMatrix, ErrorsNameFileAndLine)
{
    const std::pair<std::string, std::string> bad[] = {
        {"[matrix]\nentries = [\"syscall64\", \"sysenter\"]\n", "m.toml:2: unknown entry kind 'sysenter'"},
        {"[matrix]\n\nconventions = [\"v4.15\"]\n", "m.toml:3: convention 'v4.15'"},
        {"[matrix]\npatches = [\"abcdef0\"]\n", "m.toml:2:"},
        {"[matrix]\npatches = [\"\"]\n", "m.toml:2: an empty patch list"},
        {"[matrix]\nmitigations = [\"pti,bogus\"]\n", "m.toml:2:"},
        {"[matrix]\ncpu = [\"via\"]\n", "m.toml:2: cpu 'via'"},
        {"[matrix]\nsyscalls = [\"open\"]\n", "m.toml:2: sysloop cannot call 'open'"},
        {"[matrix]\niterations = 0\n", "m.toml:2: iterations"},
        {"[matrix]\niterations = \"5\"\n", "m.toml:2: iterations"},
        {"[matrix]\nentrys = [\"int80\"]\n", "m.toml:2: unknown key 'entrys' in [matrix]"},
        {"[matrix]\n[other]\n", "m.toml:2: unknown table [other]"},
        {"name = \"x\"\n", "m.toml:1: key 'name' outside any table"},
        {"[workload.x]\nprogram = \"p\"\n", "m.toml: no [matrix]"},
        {"[matrix]\nworkloads = [\"nope\"]\n", "m.toml:2: workload 'nope'"},
        {"[matrix]\n[workload.w]\nargs = [\"a\"]\n", "m.toml:2: [workload.w] needs program"},
        {"[matrix]\nkernels = [\"v4.17\", \"dfe6450,fa69714,ebeb8c8,6dc936f\"]\n",
         "m.toml:2: 'v4.17' is listed twice"},
        {"[matrix]\nmitigations = [\"\", \"nospec\"]\n", "m.toml:2: 'nospec' is listed twice"},
        {"[matrix]\nuarch = [\"zen 4\"]\n", "m.toml:2: 'zen 4': empty, or blanks"},
        {"[matrix]\nentries = []\n", "m.toml:2: 'entries' is an empty array"},
        {"[matrix]\nentries = 5\n", "m.toml:2: 'entries' must be a string"},
        {"[matrix]\nname = \"a\"\n\nx = \"1.5\n", "m.toml:4: unterminated string"},
    };
    for (auto &b : bad) {
        std::string e = parse_err(b.first);
        EXPECT_NE(e.find(b.second), std::string::npos) << "input:\n" << b.first << "error: " << e;
    }
    EXPECT_EQ(parse_err(small_matrix), "");
}

TEST(BenchMatrix, CrossProductAndImpossibleCells)
{
    es_matrix m;
    char err[512];
    ASSERT_EQ(es_matrix_parse(small_matrix, "small.toml", &m, err, sizeof err), 0) << err;
    EXPECT_STREQ(m.name, "small");
    ASSERT_EQ(m.naxis[AX_KERNEL], 3u);
    // normalised by es_patches_name
    EXPECT_STREQ(m.axes[AX_KERNEL][1], "v4.16+dfe64506");
    // defaults for the axes left out
    EXPECT_STREQ(m.axes[AX_MITIGATIONS][0], "nospec");
    EXPECT_STREQ(m.axes[AX_UARCH][0], "znver4");
    EXPECT_STREQ(m.axes[AX_WORKLOAD][0], "sysloop");
    es_cell *cells;
    size_t n = es_matrix_cells(&m, &cells);
    ASSERT_EQ(n, 3u * 3 * 2);
    size_t skipped = 0;
    for (size_t i = 0; i < n; i++) {
        const es_cell &c = cells[i];
        std::string e = c.v[AX_ENTRY], cpu = c.v[AX_CPU];
        bool impossible = (e == "sysenter32" && cpu != "intel") || (e == "syscall32" && cpu != "amd");
        EXPECT_EQ(c.skip != nullptr, impossible) << e << " " << cpu;
        skipped += c.skip != nullptr;
        EXPECT_EQ(c.iterations, 20);
    }
    EXPECT_EQ(skipped, small_skipped);
    // kernel outermost, the last axis (workload) fastest; cpu before it
    EXPECT_STREQ(cells[0].v[AX_KERNEL], "v4.16");
    EXPECT_STREQ(cells[0].v[AX_CPU], "intel");
    EXPECT_STREQ(cells[1].v[AX_CPU], "amd");
    EXPECT_STREQ(cells[n - 1].v[AX_KERNEL], "v4.17");
    free(cells);
    es_matrix_free(&m);

    // vsyscall only has gettimeofday, time and getcpu
    ASSERT_EQ(es_matrix_parse("[matrix]\nentries = [\"vsyscall\"]\nsyscalls = [\"getpid\", "
                              "\"time\"]\n",
                              "v.toml", &m, err, sizeof err),
              0)
        << err;
    n = es_matrix_cells(&m, &cells);
    ASSERT_EQ(n, 2u);
    EXPECT_NE(cells[0].skip, nullptr);
    EXPECT_EQ(cells[1].skip, nullptr);
    free(cells);
    es_matrix_free(&m);

    // a custom workload limits its entries and syscalls
    ASSERT_EQ(es_matrix_parse("[matrix]\nentries = [\"syscall64\", \"int80\"]\n"
                              "workloads = [\"sysloop\", \"loop\"]\n"
                              "[workload.loop]\nprogram = \"getpid_loop\"\n"
                              "args = [\"{iterations}\"]\nentries = [\"syscall64\"]\n",
                              "w.toml", &m, err, sizeof err),
              0)
        << err;
    n = es_matrix_cells(&m, &cells);
    ASSERT_EQ(n, 4u);
    EXPECT_EQ(cells[0].skip, nullptr); // syscall64 sysloop
    EXPECT_EQ(cells[1].skip, nullptr); // syscall64 loop
    EXPECT_EQ(cells[2].skip, nullptr); // int80 sysloop
    EXPECT_NE(cells[3].skip, nullptr); // int80 loop
    free(cells);
    es_matrix_free(&m);
}

TEST(BenchJson, ReadsAndRejects)
{
    char err[256];
    const char *doc = " {\"a\": [1, -2.5e1, true, false, null, \"s\\u00e9\\n\"], \"b\": {\"c\": 3}} ";
    es_json *j = es_json_parse(doc, strlen(doc), err, sizeof err);
    ASSERT_NE(j, nullptr) << err;
    const es_json *a = es_json_get(j, "a");
    ASSERT_NE(a, nullptr);
    ASSERT_EQ(a->n, 6u);
    EXPECT_EQ(a->items[1].num, -25);
    EXPECT_EQ(a->items[2].boolean, 1);
    EXPECT_EQ(a->items[3].boolean, 0);
    EXPECT_EQ(a->items[4].type, ES_J_NULL);
    EXPECT_STREQ(a->items[5].str, "s\xc3\xa9\n");
    EXPECT_EQ(es_json_num(es_json_get(j, "b"), "c"), 3);
    EXPECT_EQ(es_json_num(j, "missing"), -1);
    es_json_free(j);
    const std::vector<std::string> bad = {"", "{", "[1,]", "{\"a\" 1}", "[1] x", "\"abc",
                                          "{\"a\": tru}", "[\"\\q\"]", "-", std::string(100, '[')};
    for (const std::string &copy : bad) {
        EXPECT_EQ(es_json_parse(copy.c_str(), copy.size(), err, sizeof err), nullptr) << copy;
    }
}

TEST(BenchJson, ReportPrefersTheCellsSyscallRow)
{
    const char *report =
        R"({"unknown": {"x": [1]}, "cycles": 5000, "instructions": 2500,
            "syscalls": {"count": 12, "cycles": 3000, "phases": {"hw_entry": 120, "body": 600}},
            "per_syscall": [{"name": "write", "count": 1, "cycles": 900},
                            {"name": "getpid", "count": 10, "cycles": 2000,
                             "phases": {"hw_entry": 100, "entry_asm": 300, "body": 500}}]})";
    es_cell c;
    memset(&c, 0, sizeof c);
    char err[256];
    ASSERT_EQ(es_bench_read_report(report, strlen(report), "getpid", &c, err, sizeof err), 0) << err;
    EXPECT_EQ(c.cycles, 5000);
    EXPECT_EQ(c.instructions, 2500);
    EXPECT_EQ(c.calls, 10);
    EXPECT_EQ(c.call_cycles, 2000);
    EXPECT_EQ(c.phases[0], 100);
    EXPECT_EQ(c.phases[1], 300);
    EXPECT_EQ(c.phases[4], 500);
    EXPECT_EQ(c.phases[6], 0);
    // no row for the syscall: all syscalls of the run
    ASSERT_EQ(es_bench_read_report(report, strlen(report), "time", &c, err, sizeof err), 0);
    EXPECT_EQ(c.calls, 12);
    EXPECT_EQ(c.call_cycles, 3000);
    EXPECT_EQ(c.phases[0], 120);
    // stub-style names match too, other names do not
    const char *stub = R"({"summary": {"cycles": 10, "instructions": 5,
                           "per_syscall": [{"name": "__x64_sys_gettimeofday", "count": 2, "cycles": 8},
                                           {"name": "__x64_sys_time", "count": 3, "cycles": 9}]}})";
    ASSERT_EQ(es_bench_read_report(stub, strlen(stub), "time", &c, err, sizeof err), 0) << err;
    EXPECT_EQ(c.calls, 3);
    const char *nocycles = R"({"instructions": 5})";
    EXPECT_EQ(es_bench_read_report(nocycles, strlen(nocycles), "time", &c, err, sizeof err), -1);
    EXPECT_NE(std::string(err).find("cycles"), std::string::npos);
}

// Bad input never crashes the host: every prefix of a good matrix and of a
// good report, and seeded random mutations of both, parse or fail cleanly.
TEST(BenchRobustness, TruncatedAndMutatedInputs)
{
    std::string report = R"({"cycles": 5000, "instructions": 2500, "syscalls": {"count": 12,
        "cycles": 3000, "phases": {"hw_entry": 120}}, "per_syscall": [{"name": "getpid",
        "count": 10, "cycles": 2000, "phases": {"body": 5e2}}], "s": "a\u00e9\n"})";
    std::string matrix = small_matrix;
    matrix += "[workload.w]\nprogram = \"p\"\nargs = [\"{iterations}\", \"\\t\"]\n";
    unsigned seed = 12345;
    auto rnd = [&seed]() { return seed = seed * 1103515245u + 12345u, (seed >> 16) & 0x7fff; };
    const char alphabet[] = "[]{}\",:=#\n\\ -.0123456789aeflnrstu\x01\xff";
    for (int round = 0; round < 4000; round++) {
        for (std::string *text : {&report, &matrix}) {
            std::string t = *text;
            if (round < (int)t.size()) {
                t.resize((size_t)round); // every prefix
            } else {
                for (int k = 0, n = 1 + (int)(rnd() % 4); k < n; k++) {
                    size_t at = rnd() % t.size();
                    char c = alphabet[rnd() % (sizeof alphabet - 1)];
                    switch (rnd() % 3) {
                    case 0: t[at] = c; break;
                    case 1: t.insert(at, 1, c); break;
                    default: t.erase(at, 1);
                    }
                }
            }
            char err[512];
            if (text == &report) {
                es_cell c;
                memset(&c, 0, sizeof c);
                int rc = es_bench_read_report(t.data(), t.size(), "getpid", &c, err, sizeof err);
                EXPECT_TRUE(rc == 0 || err[0]) << t;
            } else {
                es_matrix m;
                if (es_matrix_parse(t.c_str(), "f.toml", &m, err, sizeof err) == 0) {
                    es_cell *cells;
                    size_t n = es_matrix_cells(&m, &cells);
                    EXPECT_GT(n, 0u);
                    free(cells);
                    es_matrix_free(&m);
                } else {
                    EXPECT_EQ(std::string(err).rfind("f.toml", 0), 0u) << err;
                }
            }
        }
    }
}

TEST_F(BenchRun, OutputsResumeAndChart)
{
    std::string m = dir + "/small.toml", out = dir + "/out";
    spit(m, small_matrix);
    ASSERT_EQ(fake(m, out), 0) << err_text;
    EXPECT_EQ(runner_calls(), small_cells);
    EXPECT_NE(err_text.find("sysenter32 needs cpu intel"), std::string::npos) << err_text;
    EXPECT_NE(err_text.find("syscall32 needs cpu amd"), std::string::npos) << err_text;

    // CSV: a header and one row per runnable cell, all axes and figures
    std::string csv = slurp(out + "/results.csv");
    auto rows = lines(csv);
    ASSERT_EQ(rows.size(), 1 + small_cells) << csv;
    auto header = split(rows[0], ',');
    for (const char *col : {"key", "kernel", "entry", "mitigations", "syscall", "uarch", "cpu",
                            "workload", "iterations", "status", "cycles", "cycles_per_call",
                            "hw_entry", "entry_asm", "dispatch", "stub", "body", "exit_path",
                            "hw_exit"})
        EXPECT_NE(std::find(header.begin(), header.end(), col), header.end()) << col;
    std::set<std::string> keys, configs;
    for (size_t i = 1; i < rows.size(); i++) {
        auto r = csv_row(header, rows[i]);
        EXPECT_EQ(r["status"], "ok");
        EXPECT_EQ(r["iterations"], "20");
        EXPECT_EQ(r["calls"], "20"); // the fake's per-syscall row, not all 21 calls
        keys.insert(r["key"]);
        configs.insert(r["kernel"] + r["entry"] + r["cpu"]);
        // per-call phases add up to the per-call total
        double sum = 0;
        for (const char *p : {"hw_entry", "entry_asm", "dispatch", "stub", "body", "exit_path",
                              "hw_exit"})
            sum += atof(r[p].c_str());
        EXPECT_NEAR(sum, atof(r["cycles_per_call"].c_str()), 0.01) << rows[i];
        EXPECT_NE(r["entry"] + r["cpu"], "sysenter32amd");
        EXPECT_NE(r["entry"] + r["cpu"], "syscall32intel");
    }
    EXPECT_EQ(keys.size(), small_cells);
    EXPECT_EQ(configs.size(), small_cells);
    EXPECT_TRUE(configs.count("v4.16+dfe64506sysenter32intel"));

    // JSON: well-formed (our reader), the cells, the skipped ones with why
    std::string js = slurp(out + "/results.json");
    char err[256];
    es_json *j = es_json_parse(js.data(), js.size(), err, sizeof err);
    ASSERT_NE(j, nullptr) << err;
    ASSERT_NE(es_json_get(j, "cells"), nullptr);
    EXPECT_EQ(es_json_get(j, "cells")->n, small_cells);
    EXPECT_EQ(es_json_get(j, "skipped")->n, small_skipped);
    EXPECT_EQ(es_json_num(es_json_get(j, "summary"), "ok"), small_cells);
    const es_json *c0 = &es_json_get(j, "cells")->items[0];
    EXPECT_GT(es_json_num(c0, "cycles_per_call"), 0);
    EXPECT_NE(es_json_get(es_json_get(c0, "phases_per_call"), "dispatch"), nullptr);
    const es_json *s0 = &es_json_get(j, "skipped")->items[0];
    ASSERT_NE(es_json_get(s0, "reason"), nullptr);
    EXPECT_NE(std::string(es_json_get(s0, "reason")->str).find("needs cpu"), std::string::npos);
    es_json_free(j);

    // SVG: one stacked bar per cell (7 phase rectangles each), a legend
    std::string svg = slurp(out + "/chart.svg");
    EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
    EXPECT_NE(svg.find("</svg>\n"), std::string::npos);
    EXPECT_EQ(count(svg, "<g class=\"bar\""), small_cells);
    EXPECT_EQ(count(svg, "<rect class=\"dispatch\""), small_cells);
    EXPECT_EQ(count(svg, "<g"), count(svg, "</g>"));
    EXPECT_EQ(count(svg, "<text"), count(svg, "</text>"));
    EXPECT_NE(svg.find("<g class=\"legend\">"), std::string::npos);
    EXPECT_NE(svg.find(">hw_exit</text>"), std::string::npos);
    if (system("command -v xmllint >/dev/null 2>&1") == 0) {
        EXPECT_EQ(system(("xmllint --noout " + out + "/chart.svg").c_str()), 0);
    }

    // resume: nothing runs again, the outputs are the same
    ASSERT_EQ(fake(m, out), 0) << err_text;
    EXPECT_EQ(runner_calls(), small_cells);
    EXPECT_NE(err_text.find("0 to run"), std::string::npos) << err_text;
    EXPECT_EQ(slurp(out + "/results.csv"), csv);

    // a store line cut short by an interruption is ignored, a lost line
    // reruns just that cell
    auto store = lines(slurp(out + "/store.tsv"));
    ASSERT_EQ(store.size(), 1 + small_cells); // comment + cells
    std::string kept;
    for (size_t i = 0; i + 1 < store.size(); i++)
        kept += store[i] + "\n";
    kept += store.back().substr(0, 30); // no newline: a torn write
    spit(out + "/store.tsv", kept);
    ASSERT_EQ(fake(m, out), 0) << err_text;
    EXPECT_EQ(runner_calls(), small_cells + 1);
    EXPECT_EQ(slurp(out + "/results.csv"), csv);
    EXPECT_EQ(count(slurp(out + "/store.tsv"), store.back()), 1u);

    // another entrysim version or runner would be another key: a different
    // runner binary reruns everything
    std::string other = dir + "/runner2";
    ASSERT_EQ(system(("cp " ES_TEST_FAKE_RUNNER " " + other + " && printf x >> " + other).c_str()),
              0);
    ASSERT_EQ(bench(m, out, "--runner " + other, "FAKE_RUNNER_LOG=" + dir + "/runner.log"), 0)
        << err_text;
    EXPECT_EQ(runner_calls(), 2 * small_cells + 1);
}

TEST_F(BenchRun, ListRunsNothing)
{
    std::string m = dir + "/small.toml";
    spit(m, small_matrix);
    ASSERT_EQ(fake(m, dir + "/out", "", "--list"), 0) << err_text;
    EXPECT_EQ(runner_calls(), 0u);
    std::string out = slurp(dir + "/stdout");
    EXPECT_EQ(lines(out).size(), small_cells + small_skipped + 1) << out;
    EXPECT_NE(out.find("12 cells, 6 skipped as impossible"), std::string::npos) << out;
    EXPECT_NE(access((dir + "/out").c_str(), F_OK), 0);
}

TEST_F(BenchRun, FailedCellsAreReportedAndKeepTheOthers)
{
    std::string m = dir + "/small.toml", out = dir + "/out";
    spit(m, small_matrix);
    // every sysenter32 cell (3) fails, a v4.17 cell writes garbage
    EXPECT_EQ(fake(m, out, "FAKE_RUNNER_FAIL=sysenter32"), 1);
    EXPECT_NE(err_text.find("FAILED: exit status 3; stderr: fake_runner: failing as asked"),
              std::string::npos)
        << err_text;
    EXPECT_NE(err_text.find("3 failed"), std::string::npos) << err_text;
    auto rows = lines(slurp(out + "/results.csv"));
    ASSERT_EQ(rows.size(), 1 + small_cells);
    auto header = split(rows[0], ',');
    size_t failed = 0;
    for (size_t i = 1; i < rows.size(); i++) {
        auto r = csv_row(header, rows[i]);
        bool f = r["entry"] == "sysenter32";
        EXPECT_EQ(r["status"], f ? "failed" : "ok") << rows[i];
        if (f) {
            EXPECT_NE(r["note"].find("exit status 3"), std::string::npos) << rows[i];
        }
        failed += f;
    }
    EXPECT_EQ(failed, 3u);
    std::string svg = slurp(out + "/chart.svg");
    EXPECT_EQ(count(svg, "<g class=\"bar\""), small_cells - 3);
    EXPECT_EQ(count(svg, "<g class=\"failed\""), 3u);
    // only the good cells are stored; the next run retries the failed ones
    EXPECT_EQ(lines(slurp(out + "/store.tsv")).size(), 1 + small_cells - 3);
    size_t before = runner_calls();
    EXPECT_EQ(fake(m, out), 0) << err_text;
    EXPECT_EQ(runner_calls(), before + 3);
    EXPECT_EQ(count(slurp(out + "/results.csv"), ",failed,"), 0u);
}

TEST_F(BenchRun, TimeoutsAndBadReportsFailTheirCell)
{
    std::string m = dir + "/m.toml", out = dir + "/out";
    spit(m, "[matrix]\nentries = [\"syscall64\", \"int80\", \"x32\"]\niterations = 5\n");
    EXPECT_EQ(fake(m, out, "FAKE_RUNNER_HANG=int80 FAKE_RUNNER_GARBAGE=x32", "--timeout 0.5"), 1);
    std::string csv = slurp(out + "/results.csv");
    EXPECT_NE(csv.find("timed out after 0.5 s"), std::string::npos) << csv;
    EXPECT_NE(csv.find("timing report"), std::string::npos) << csv;
    EXPECT_EQ(count(csv, ",ok,"), 1u) << csv;
}

// Stopped by a signal mid-run: the finished cells are in the store, the
// running child is killed, and the next run runs only what was left.  The
// signal comes from the third cell's runner once it is running (no timer:
// timeout(1) here raced the start of bench on a loaded machine).
TEST_F(BenchRun, InterruptedRunKeepsFinishedCells)
{
    std::string m = dir + "/m.toml", out = dir + "/out";
    spit(m, "[matrix]\nentries = [\"syscall64\", \"int80\", \"x32\"]\niterations = 5\n");
    EXPECT_EQ(fake(m, out, "FAKE_RUNNER_STOP=x32", "-j 1"), 128 + SIGTERM) << err_text;
    EXPECT_NE(err_text.find("Terminated: stopping 1 running cell"), std::string::npos)
        << err_text;
    EXPECT_EQ(lines(slurp(out + "/store.tsv")).size(), 1u + 2);
    std::string csv = slurp(out + "/results.csv");
    EXPECT_EQ(count(csv, ",ok,"), 2u) << csv;
    EXPECT_NE(csv.find("interrupted ("), std::string::npos) << csv;
    size_t before = runner_calls();
    EXPECT_EQ(fake(m, out), 0) << err_text;
    EXPECT_EQ(runner_calls(), before + 1);
    EXPECT_EQ(count(slurp(out + "/results.csv"), ",ok,"), 3u);
}

// A signal to the whole process group (^C, timeout(1)) also kills the
// running child: a child killed by a signal while a stop is pending counts
// as interrupted, not as a cell that failed by itself.
TEST_F(BenchRun, GroupSignalInterruptsTheRunningCell)
{
    std::string m = dir + "/m.toml", out = dir + "/out";
    spit(m, "[matrix]\nentries = [\"syscall64\", \"int80\", \"x32\"]\niterations = 5\n");
    EXPECT_EQ(fake(m, out, "FAKE_RUNNER_STOP_ALL=int80", "-j 1"), 128 + SIGTERM) << err_text;
    EXPECT_NE(err_text.find("stopping 1 running cell"), std::string::npos) << err_text;
    std::string csv = slurp(out + "/results.csv");
    EXPECT_EQ(count(csv, ",ok,"), 1u) << csv;
    EXPECT_EQ(count(csv, "interrupted (Terminated)"), 1u) << csv;
    EXPECT_EQ(count(csv, "not run: interrupted"), 1u) << csv;
    EXPECT_EQ(count(csv, "killed by signal"), 0u) << csv;
    EXPECT_EQ(fake(m, out), 0) << err_text;
    EXPECT_EQ(runner_calls(), 2u + 2);
}

// timeout(1), as a user would stop a long run; -k so that a bench that
// ignored the signal fails this test instead of hanging it.  No leak check
// for this one process under ASan: timeout(1) follows SIGTERM with SIGCONT
// to the group, and a SIGCONT that lands while LeakSanitizer's exit scan is
// attaching (PTRACE_ATTACH, whose SIGSTOP a SIGCONT discards) leaves the
// scan's tracer and bench waiting for each other for ever: seen as this
// test hanging 1 time in 60 under load, with bench's outputs all written.
// The deterministic stop tests above keep the leak check.
TEST_F(BenchRun, TimeoutCommandStopsTheRun)
{
    std::string m = dir + "/m.toml", out = dir + "/out";
    spit(m, "[matrix]\nentries = [\"syscall64\", \"int80\", \"x32\"]\niterations = 5\n");
    EXPECT_EQ(fake(m, out,
                   "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 "
                   "timeout -k 20 --preserve-status -s TERM 1 env FAKE_RUNNER_HANG=x32",
                   "-j 1"),
              128 + SIGTERM)
        << err_text;
    // how far it got depends on the machine's load; what it kept is sound
    std::string csv = slurp(out + "/results.csv");
    if (!csv.empty()) {
        EXPECT_EQ(count(csv, ",ok,"), lines(slurp(out + "/store.tsv")).size() - 1) << csv;
        EXPECT_EQ(count(csv, "killed by signal"), 0u) << csv;
    }
    EXPECT_EQ(fake(m, out), 0) << err_text;
    EXPECT_EQ(count(slurp(out + "/results.csv"), ",ok,"), 3u);
}

TEST_F(BenchRun, BadInputExitsTwoWithTheReason)
{
    std::string m = dir + "/bad.toml";
    spit(m, "[matrix]\nentries = [\"syscall64\"]\nuarch = \"znver4\n");
    EXPECT_EQ(fake(m, dir + "/out"), 2);
    EXPECT_NE(err_text.find("bad.toml:3: unterminated string"), std::string::npos) << err_text;
    EXPECT_EQ(fake(dir + "/missing.toml", dir + "/out"), 2);
    EXPECT_NE(err_text.find("missing.toml"), std::string::npos) << err_text;
    spit(m, std::string("[matrix]\n\0\n", 11));
    EXPECT_EQ(fake(m, dir + "/out"), 2);
    EXPECT_NE(err_text.find("NUL"), std::string::npos) << err_text;
    std::string good = dir + "/good.toml";
    spit(good, "[matrix]\n");
    EXPECT_EQ(fake(good, dir + "/out", "", "-j 0"), 2);
    EXPECT_EQ(fake(good, dir + "/out", "", "--bogus"), 2);
    EXPECT_NE(err_text.find("unknown option --bogus"), std::string::npos) << err_text;
    EXPECT_EQ(bench(good, dir + "/out", "--runner /nonexistent/runner"), 2);
    // a workload that is not there fails its cells, not the run
    spit(m, "[matrix]\nworkloads = [\"w\"]\n[workload.w]\nprogram = \"/nonexistent/w\"\n");
    EXPECT_EQ(fake(m, dir + "/out"), 1);
    EXPECT_NE(slurp(dir + "/out/results.csv").find("/nonexistent/w cannot be read"),
              std::string::npos);
    EXPECT_EQ(runner_calls(), 0u);
}

TEST_F(BenchRun, ShippedMatricesParse)
{
    for (const char *name : {"series", "entry", "mitigations"}) {
        std::string m = std::string(ES_TEST_MATRICES) + "/" + name + ".toml";
        ASSERT_EQ(fake(m, dir + "/out", "", "--list"), 0) << name << ": " << err_text;
#if ES_TEST_HAVE_M32 && ES_TEST_HAVE_X32
        EXPECT_EQ(count(slurp(dir + "/stdout"), "(workload"), 0u) << name; // all built
#endif
    }
}

// The real entrysim, 2 cells, twice in separate output directories: the
// same cell gives the same cycles (--deterministic and a deterministic model).
TEST_F(BenchRun, RealEntrysimIsDeterministic)
{
    std::string m = dir + "/real.toml";
    spit(m, "[matrix]\nkernels = [\"v4.16\", \"v4.17\"]\nentries = [\"syscall64\"]\n"
            "syscalls = [\"getpid\"]\niterations = 30\n");
    ASSERT_EQ(bench(m, dir + "/a", "-j 2"), 0) << err_text << slurp(dir + "/a/results.csv");
    ASSERT_EQ(bench(m, dir + "/b", "-j 1"), 0) << err_text;
    std::string a = slurp(dir + "/a/results.csv"), b = slurp(dir + "/b/results.csv");
    EXPECT_EQ(a, b);
    auto rows = lines(a);
    ASSERT_EQ(rows.size(), 3u) << a;
    auto header = split(rows[0], ',');
    auto v416 = csv_row(header, rows[1]), v417 = csv_row(header, rows[2]);
    EXPECT_EQ(v416["kernel"], "v4.16");
    EXPECT_EQ(v417["kernel"], "v4.17");
    for (auto *r : {&v416, &v417}) {
        EXPECT_EQ((*r)["calls"], "30");
        EXPECT_GT(atof((*r)["cycles_per_call"].c_str()), 50);
        EXPECT_GT(atof((*r)["hw_entry"].c_str()), 0);
        EXPECT_GT(atof((*r)["dispatch"].c_str()), 0);
    }
    // the two kernels run different entry code
    EXPECT_NE(v416["cycles"], v417["cycles"]);
}

// Every entry kind through the real entrysim and the built workloads: each
// cell runs, and the report's row for the cell's syscall is found (5 calls).
TEST_F(BenchRun, RealEntrysimEveryEntry)
{
#if !(ES_TEST_HAVE_M32 && ES_TEST_HAVE_X32)
    GTEST_SKIP() << "no i386 or x32 toolchain: sysloop32/sysloopx32 not built";
#endif
    std::string m = dir + "/every.toml";
    spit(m, "[matrix]\nentries = [\"syscall64\", \"int80\", \"sysenter32\", \"syscall32\", "
            "\"x32\", \"vsyscall\"]\ncpu = [\"intel\", \"amd\"]\n"
            "syscalls = [\"gettimeofday\"]\niterations = 5\n");
    ASSERT_EQ(bench(m, dir + "/o", ""), 0) << err_text << slurp(dir + "/o/results.csv");
    auto rows = lines(slurp(dir + "/o/results.csv"));
    ASSERT_EQ(rows.size(), 1u + 10);
    auto header = split(rows[0], ',');
    std::set<std::string> entries;
    for (size_t i = 1; i < rows.size(); i++) {
        auto r = csv_row(header, rows[i]);
        EXPECT_EQ(r["calls"], "5") << rows[i];
        EXPECT_GT(atof(r["hw_entry"].c_str()), 0) << rows[i];
        EXPECT_GT(atof(r["body"].c_str()), 0) << rows[i];
        entries.insert(r["entry"]);
    }
    EXPECT_EQ(entries.size(), 6u);
}

// A [workload.NAME] table: its program and expanded arguments reach the
// runner.
TEST_F(BenchRun, CustomWorkloadArguments)
{
    std::string m = dir + "/w.toml";
    spit(m, "[matrix]\nworkloads = [\"mine\"]\nsyscalls = [\"time\"]\niterations = 7\n"
            "[workload.mine]\nprogram = \"" ES_TEST_WORKLOADS "/sysloop64\"\n"
            "args = [\"{entry}\", \"{syscall}\", \"n={iterations}\"]\n");
    ASSERT_EQ(fake(m, dir + "/o"), 0) << err_text;
    std::string log = slurp(dir + "/runner.log");
    EXPECT_NE(log.find("-- " ES_TEST_WORKLOADS "/sysloop64 syscall64 time n=7\n"), std::string::npos)
        << log;
    EXPECT_NE(log.find("run --deterministic --timing-json "), std::string::npos) << log;
    EXPECT_NE(log.find("--mitigations none,nospec --cpu amd"), std::string::npos) << log;
}

// Issue 12 item 9: a stop signal that comes while the first one is being
// handled (timeout(1) signals the process and then its group; a user may
// press ^C twice) must not kill bench before it writes its outputs.  The
// process is stopped while both signals are queued, so both are pending
// at once whatever the machine's load; the test waits for conditions (the
// store holds the finished cells, the hanging cell has started), not for
// a time.
TEST_F(BenchRun, SecondStopSignalStillWritesResults)
{
    std::string m = dir + "/m.toml", out = dir + "/out";
    spit(m, "[matrix]\nentries = [\"syscall64\", \"int80\", \"x32\"]\niterations = 5\n");
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        std::string cmd = "exec env FAKE_RUNNER_LOG=" + dir + "/runner.log FAKE_RUNNER_HANG=x32 " +
                          ES_TEST_ENTRYSIM " bench --matrix " + m + " --out " + out +
                          " --workloads " ES_TEST_WORKLOADS " --runner " ES_TEST_FAKE_RUNNER
                          " -j 1 2>" + dir + "/stderr >" + dir + "/stdout";
        execl("/bin/sh", "sh", "-c", cmd.c_str(), (char *)nullptr);
        _exit(127);
    }
    bool ready = false;
    for (int i = 0; i < 6000 && !ready; i++) { // up to 60 s on a very busy machine
        ready = lines(slurp(out + "/store.tsv")).size() == 3 && runner_calls() == 3;
        if (!ready)
            usleep(10000);
    }
    EXPECT_TRUE(ready) << slurp(dir + "/stderr");
    kill(pid, SIGSTOP);
    kill(pid, SIGHUP);
    kill(pid, SIGTERM);
    kill(pid, SIGCONT);
    int st = 0;
    ASSERT_EQ(waitpid(pid, &st, 0), pid);
    err_text = slurp(dir + "/stderr");
    ASSERT_TRUE(WIFEXITED(st)) << "killed by signal " << WTERMSIG(st) << "\n" << err_text;
    EXPECT_TRUE(WEXITSTATUS(st) == 128 + SIGHUP || WEXITSTATUS(st) == 128 + SIGTERM)
        << WEXITSTATUS(st);
    EXPECT_NE(err_text.find("stopping 1 running cell"), std::string::npos) << err_text;
    std::string csv = slurp(out + "/results.csv");
    EXPECT_EQ(count(csv, ",ok,"), 2u) << csv;
    EXPECT_NE(csv.find("interrupted ("), std::string::npos) << csv;
}

// Issue 12 item 8: the matrix name becomes a directory under bench-results/
TEST(BenchMatrix, NameCannotLeaveTheResultsDirectory)
{
    for (const char *name : {"..", "../up", "a/b", "/tmp/abs", ".", "x..y"}) {
        std::string e = parse_err(std::string("[matrix]\nname = \"") + name + "\"\n");
        EXPECT_NE(e.find("m.toml:2: name"), std::string::npos) << name << ": " << e;
        EXPECT_NE(e.find("'/' or '..'"), std::string::npos) << name << ": " << e;
    }
    EXPECT_EQ(parse_err("[matrix]\nname = \"ok.name-1\"\n"), "");
}

// Issue 12 item 8: user input quoted in an error message has its control
// characters escaped (a lone CR, escapes in strings)
TEST(BenchMatrix, ErrorsEscapeControlCharacters)
{
    std::string e = parse_err("[matrix]\rentries = [\"syscall64\"]\n"); // a lone CR
    EXPECT_EQ(e.find('\r'), std::string::npos) << e;
    EXPECT_NE(e.find("\\r"), std::string::npos) << e;
    e = parse_err("[matrix]\nentries = [\"sys\\tcall\\n\"]\n");
    EXPECT_EQ(e.find_first_of("\t\n"), std::string::npos) << e;
    EXPECT_NE(e.find("sys\\tcall\\n"), std::string::npos) << e;
}

// Issue 12 item 8: a workload argument longer than 1023 bytes reaches the
// runner whole
TEST_F(BenchRun, LongWorkloadArgumentsAreNotCut)
{
    std::string m = dir + "/w.toml", big(5000, 'a');
    spit(m, "[matrix]\nworkloads = [\"mine\"]\niterations = 7\n"
            "[workload.mine]\nprogram = \"" ES_TEST_WORKLOADS "/sysloop64\"\n"
            "args = [\"" + big + "{iterations}\", \"{entry}\"]\n");
    ASSERT_EQ(fake(m, dir + "/o"), 0) << err_text;
    std::string log = slurp(dir + "/runner.log");
    EXPECT_NE(log.find(" " + big + "7 syscall64\n"), std::string::npos) << log.size();
}

// Issue 12 items 3 and 8: a FIFO as the store (or the matrix) is refused,
// not opened for a writer that never comes
TEST_F(BenchRun, FifoStoreIsRefusedNotWaitedFor)
{
    std::string m = dir + "/m.toml", out = dir + "/out";
    spit(m, "[matrix]\n");
    ASSERT_EQ(system(("mkdir -p " + out + " && mkfifo " + out + "/store.tsv").c_str()), 0);
    EXPECT_EQ(fake(m, out, "timeout -s KILL 10"), 2) << err_text;
    EXPECT_NE(err_text.find("store.tsv: not a regular file"), std::string::npos) << err_text;
    std::string fifo = dir + "/fifo.toml";
    ASSERT_EQ(system(("mkfifo " + fifo).c_str()), 0);
    EXPECT_EQ(fake(fifo, dir + "/o2", "timeout -s KILL 10"), 2) << err_text;
    EXPECT_NE(err_text.find("fifo.toml: not a regular file"), std::string::npos) << err_text;
}
