// The man page and the bash completion (cli/gen_docs.c) come from the
// command and options tables the parser and every --help read (issue 17,
// "Package and conventions"): every command and every option of the
// tables is in both, the page renders without a groff warning, the
// completion completes what the tables say, and the files the build
// installs are what `entrysim help --man | --completion bash` prints.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cmd_util.h"
#include "commands.h"
#include "opts.h"

namespace {

std::vector<const es_cmd *> commands()
{
    size_t n = 0;
    const es_cmd *const *c = es_commands(&n);
    return std::vector<const es_cmd *>(c, c + n);
}

// The names the parser accepts for c (the first row of a name wins).
std::set<std::string> option_names(const es_cmd *c)
{
    std::set<std::string> s;
    for (size_t k = 0; k < c->nopts; k++)
        s.insert(c->opts[k].name);
    return s;
}

// An option name as roff writes it: each '-' a minus sign.
std::string roff_name(const std::string &name)
{
    std::string r;
    for (char ch : name)
        r += ch == '-' ? std::string("\\-") : std::string(1, ch);
    return r;
}

std::string slurp(const std::string &path)
{
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// What the shell command writes on stdout.
std::string run(const std::string &command)
{
    std::string out = "/tmp/es_gen_docs_out_" + std::to_string(getpid());
    if (system(("(" + command + ") > " + out).c_str()) == -1)
        return "system failed";
    std::string text = slurp(out);
    remove(out.c_str());
    return text;
}

// A file under the test's temporary folder holding text; its path.
std::string temp_file(const std::string &name, const std::string &text)
{
    const char *t = getenv("TMPDIR");
    std::string path = std::string(t && *t ? t : "/tmp") + "/es_gen_docs_" +
                       std::to_string(getpid()) + "_" + name;
    std::ofstream(path, std::ios::binary) << text;
    return path;
}

std::string completion_script()
{
    CmdResult r = cmd(es_main, {"entrysim", "help", "--completion", "bash"});
    EXPECT_EQ(r.status, 0) << r.err;
    return r.out;
}

// What _entrysim offers for the words (the last one being completed), run
// by bash in /tmp.
std::set<std::string> complete(const std::string &script, const std::vector<std::string> &words)
{
    std::string cmdline = "cd /tmp && bash --norc --noprofile -c 'source \"$1\"; shift; "
                          "COMP_WORDS=(\"$@\"); COMP_CWORD=$(($# - 1)); _entrysim; "
                          "printf \"%s\\n\" \"${COMPREPLY[@]}\"' _ " + script;
    for (const std::string &w : words)
        cmdline += " '" + w + "'";
    std::set<std::string> got;
    std::istringstream in(run(cmdline));
    for (std::string line; std::getline(in, line);)
        if (!line.empty())
            got.insert(line);
    return got;
}

} // namespace

TEST(GenDocs, ManPageNamesEveryCommandAndOption)
{
    CmdResult r = cmd(es_main, {"entrysim", "help", "--man"});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.err, "");
    EXPECT_EQ(r.out.rfind(".\\\"", 0), 0u) << r.out.substr(0, 200);
    EXPECT_NE(r.out.find(".TH ENTRYSIM 1 "), std::string::npos);
    ASSERT_GE(commands().size(), 8u);
    for (const es_cmd *c : commands()) {
        // its heading: "entrysim SYNOPSIS" (demo's is "[demo]")
        std::string first(c->synopsis, strcspn(c->synopsis, " "));
        EXPECT_NE(r.out.find(".SS\nentrysim " + first), std::string::npos) << c->name;
        EXPECT_NE(first.find(c->name), std::string::npos) << c->name;
        for (const std::string &name : option_names(c))
            EXPECT_NE(r.out.find("\\fB" + roff_name(name) + "\\fR"), std::string::npos)
                << c->name << " " << name;
    }
    // no option name left as hyphens, which man renders as typographic ones
    EXPECT_EQ(r.out.find("\\fB--"), std::string::npos);
}

TEST(GenDocs, ManPageRendersWithoutGroffWarnings)
{
    if (system("command -v groff >/dev/null 2>&1") != 0)
        GTEST_SKIP() << "groff is not installed";
    CmdResult r = cmd(es_main, {"entrysim", "help", "--man"});
    std::string page = temp_file("entrysim.1", r.out);
    std::string warn = run("groff -man -Tutf8 -ww -z " + page + " 2>&1");
    EXPECT_EQ(warn, "");
    std::string text = run("groff -man -Tascii -ww " + page + " 2>/dev/null");
    EXPECT_NE(text.find("--timing-json"), std::string::npos) << text.substr(0, 2000);
    EXPECT_NE(text.find("kernel init|build DIR"), std::string::npos);
    remove(page.c_str());
}

TEST(GenDocs, CompletionParsesAndCompletesEveryCommandAndOption)
{
    std::string script = temp_file("completion.bash", completion_script());
    ASSERT_EQ(run("bash -n " + script + " 2>&1; echo rc=$?"), "rc=0\n");
    std::set<std::string> top = complete(script, {"entrysim", ""});
    for (const es_cmd *c : commands()) {
        EXPECT_TRUE(top.count(c->name)) << c->name;
        // every option name, and nothing else, after a '-'
        std::set<std::string> got = complete(script, {"entrysim", c->name, "-"});
        EXPECT_EQ(got, option_names(c)) << c->name;
    }
    EXPECT_EQ(complete(script, {"entrysim", "ru"}), std::set<std::string>{"run"});
    EXPECT_EQ(complete(script, {"entrysim", "run", "--timing-j"}),
              std::set<std::string>{"--timing-json"});
    remove(script.c_str());
}

// Values: a fixed list from its {field}, the kernel command's words, and
// directories for DIR.
TEST(GenDocs, CompletionOffersValuesFromTheLists)
{
    std::string script = temp_file("values.bash", completion_script());
    EXPECT_EQ(complete(script, {"entrysim", "run", "--convention", ""}),
              (std::set<std::string>{"v4.16", "v4.17"}));
    EXPECT_EQ(complete(script, {"entrysim", "exposure", "--cpu", ""}),
              (std::set<std::string>{"intel", "amd"}));
    EXPECT_EQ(complete(script, {"entrysim", "kernel", ""}),
              (std::set<std::string>{"init", "build"}));
    EXPECT_EQ(complete(script, {"entrysim", "run", "--max-insns", ""}), std::set<std::string>{});
    // /tmp is the shell's folder: a DIR value completes folders only
    std::string dir = "es_gen_docs_dir_" + std::to_string(getpid());
    ASSERT_EQ(system(("mkdir -p /tmp/" + dir + " && touch /tmp/" + dir + "x").c_str()), 0);
    EXPECT_EQ(complete(script, {"entrysim", "run", "--root", dir}), std::set<std::string>{dir});
    EXPECT_EQ(complete(script, {"entrysim", "run", dir}),
              (std::set<std::string>{dir, dir + "x"}));
    system(("rmdir /tmp/" + dir + "; rm -f /tmp/" + dir + "x").c_str());
    remove(script.c_str());
}

// The build makes share/man/man1/entrysim.1 and the completion in the
// build tree (installed from there) by running the built entrysim.
TEST(GenDocs, TheBuiltFilesAreTheGeneratedOnes)
{
    CmdResult man = cmd(es_main, {"entrysim", "help", "--man"});
    EXPECT_EQ(slurp(ES_BUILD_DIR "/share/man/man1/entrysim.1"), man.out);
    EXPECT_EQ(slurp(ES_BUILD_DIR "/share/bash-completion/completions/entrysim"),
              completion_script());
}

TEST(GenDocs, HelpWithOtherArgumentsIsAUsageError)
{
    CmdResult r = cmd(es_main, {"entrysim", "help", "--completion", "zsh"});
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("--completion bash"), std::string::npos) << r.err;
    r = cmd(es_main, {"entrysim", "help"});
    EXPECT_EQ(r.status, 0);
    EXPECT_EQ(r.out.rfind("usage: entrysim ", 0), 0u);
}
