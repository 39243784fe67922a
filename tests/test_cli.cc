// The command line's help: every subcommand's --help lists every option its
// parser accepts, printed from the one options table (cli/opts.h), and
// names no option the parser refuses (issue 13 item 1).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <regex>
#include <string>
#include <vector>

#include "cmd_util.h"
#include "commands.h"
#include "opts.h"

namespace {

// What the parser of command c says about argv {name, "x"}: an option id
// (>= 0) when it accepts the name.
int parse_one(const es_cmd *c, const std::string &name)
{
    std::string a = name, v = "x";
    char *argv[] = {a.data(), v.data(), nullptr};
    es_opts p = es_opts_for(c, 2, argv);
    p.mixed = true;
    return es_opts_next(&p);
}

// The option names of a --help's option lines ("  --name ARG  text",
// "  --help, -h  text"), each line checked to fit 80 columns.
std::vector<std::string> option_names(const std::string &help, const char *cmd)
{
    static const std::regex line("^  (-[-a-z0-9]+(, -[-a-z0-9]+)*)( |$)");
    std::vector<std::string> out;
    for (size_t at = 0, nl; at < help.size(); at = nl + 1) {
        nl = help.find('\n', at);
        if (nl == std::string::npos)
            nl = help.size();
        std::string l = help.substr(at, nl - at);
        EXPECT_LE(l.size(), 80u) << cmd << ": " << l;
        std::smatch m;
        if (!std::regex_search(l, m, line))
            continue;
        std::string list = m[1].str();
        for (size_t s = 0, e; s < list.size(); s = e + 2) {
            e = list.find(", ", s);
            if (e == std::string::npos)
                e = list.size();
            out.push_back(list.substr(s, e - s));
        }
    }
    return out;
}

std::vector<const es_cmd *> commands()
{
    size_t n = 0;
    const es_cmd *const *c = es_commands(&n);
    return std::vector<const es_cmd *>(c, c + n);
}

} // namespace

TEST(CliHelp, EveryOptionTheParserAcceptsIsInItsCommandsHelp)
{
    ASSERT_GE(commands().size(), 8u);
    for (const es_cmd *c : commands()) {
        CmdResult r = cmd(c->run, {"--help"});
        EXPECT_EQ(r.status, 0) << c->name << ": " << r.err;
        EXPECT_EQ(r.err, "") << c->name;
        EXPECT_EQ(r.out.rfind("usage: entrysim ", 0), 0u) << c->name << ":\n" << r.out;
        std::vector<std::string> shown = option_names(r.out, c->name);
        for (size_t k = 0; k < c->nopts; k++) {
            std::string name = c->opts[k].name;
            EXPECT_GE(parse_one(c, name), 0) << c->name << " " << name;
            EXPECT_NE(std::find(shown.begin(), shown.end(), name), shown.end())
                << c->name << " --help omits " << name << ":\n" << r.out;
        }
    }
}

// The other way round: each option line of a --help names options the
// parser accepts.
TEST(CliHelp, EveryOptionInAHelpIsAccepted)
{
    for (const es_cmd *c : commands()) {
        CmdResult r = cmd(c->run, {"--help"});
        std::vector<std::string> shown = option_names(r.out, c->name);
        EXPECT_FALSE(shown.empty()) << c->name << ":\n" << r.out;
        for (const std::string &name : shown)
            EXPECT_GE(parse_one(c, name), 0) << c->name << " --help names " << name;
    }
}

// The report of issue 13: exposure's --help named neither --timing, --uarch
// nor --mitigations (it was no option at all: exit 2).
TEST(CliHelp, ExposureHelpNamesTimingUarchAndMitigations)
{
    size_t n = 0;
    const es_cmd *const *cs = es_commands(&n);
    const es_cmd *exposure = nullptr;
    for (size_t i = 0; i < n; i++)
        if (!strcmp(cs[i]->name, "exposure"))
            exposure = cs[i];
    ASSERT_NE(exposure, nullptr);
    CmdResult r = cmd(exposure->run, {"--help"});
    ASSERT_EQ(r.status, 0) << r.err;
    for (const char *o : {"--timing", "--uarch NAME|none", "--mitigations LIST", "--json",
                          "--entry syscall64|", "--cpu intel|amd", "--patches LIST"})
        EXPECT_NE(r.out.find(o), std::string::npos) << o << "\n" << r.out;
}

// `entrysim --help` names every command and ends with run's options and
// exit statuses; a usage error points at the command's own --help.
TEST(CliHelp, TopLevelHelpAndUsageErrors)
{
    CmdResult r = cmd(es_main, {"entrysim", "--help"});
    EXPECT_EQ(r.status, 0);
    for (const es_cmd *c : commands())
        EXPECT_NE(r.out.find(std::string("entrysim ") + c->synopsis), std::string::npos)
            << c->name << "\n" << r.out;
    EXPECT_NE(r.out.find("  --timing-json FILE"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("Exit status:"), std::string::npos) << r.out;
    r = cmd(es_main, {"entrysim", "exposure", "--bogus"});
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("Try 'entrysim exposure --help'."), std::string::npos) << r.err;
    r = cmd(es_main, {"entrysim", "demo", "x"});
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("demo takes no arguments"), std::string::npos) << r.err;
}

// The commits of the series that are no toggle are accepted by every
// command that takes --patches (issue 13 item 2): the same output as
// without them, and one line on stderr that says why.
TEST(CliPatches, CommitsThatAreNoToggleAreAcceptedWithOneLine)
{
    CmdResult plain = cmd(es_main, {"entrysim", "exposure", "--syscall", "getpid", "--patches",
                                    "dfe6450"});
    ASSERT_EQ(plain.status, 0) << plain.err;
    EXPECT_EQ(plain.err.find("--patches"), std::string::npos) << plain.err;
    CmdResult r = cmd(es_main, {"entrysim", "exposure", "--syscall", "getpid", "--patches",
                                "dfe6450,1bd21c6"});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, plain.out);
    std::string want = "entrysim: --patches: 1bd21c6c21e8 (";
    EXPECT_EQ(r.err.rfind(want, 0), 0u) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find("the guest kernel is v4.16+dfe64506\n"), std::string::npos) << r.err;

    // all seven in merge order are v4.17
    r = cmd(es_main, {"entrysim", "explain", "getpid", "--patches",
                      "dfe6450,1bd21c6,fa69714,7303e30,ebeb8c8,f8781c4,6dc936f"});
    CmdResult v417 = cmd(es_main, {"entrysim", "explain", "getpid", "--convention", "v4.17"});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, v417.out);
    EXPECT_NE(r.err.find("1bd21c6c21e8 ("), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("; 7303e30ec1d8 ("), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("; f8781c4a2263 ("), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("the guest kernel is v4.17\n"), std::string::npos) << r.err;
}
