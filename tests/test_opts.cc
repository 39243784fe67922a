// cli/opts.c: usage errors quote what the user typed; control characters
// in it are written visibly, so a CR or an escape sequence in an option
// value cannot act on the terminal (issue 12).
#include <gtest/gtest.h>

#include <stdio.h>
#include <unistd.h>

#include <string>

extern "C" {
#include "opts.h"
}

namespace {

// What es_opts_fail writes on stderr (and its status).
std::string fail_text(const es_opts &p, const char *fmt, const char *arg, int *status)
{
    fflush(stderr);
    int saved = dup(2);
    FILE *t = tmpfile();
    EXPECT_NE(t, nullptr);
    dup2(fileno(t), 2);
    *status = es_opts_fail(&p, fmt, arg);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    std::string s;
    rewind(t);
    for (int c; (c = fgetc(t)) != EOF;)
        s += (char)c;
    fclose(t);
    return s;
}

TEST(Opts, UsageErrorsEscapeControlCharacters)
{
    es_opts p = {};
    p.prefix = "entrysim: ";
    p.trailer = "Try 'entrysim --help'.\n";
    int st = 0;
    EXPECT_EQ(fail_text(p, "unknown option %s", "--bad\ropt", &st),
              "entrysim: unknown option --bad\\ropt\nTry 'entrysim --help'.\n");
    EXPECT_EQ(st, ES_EX_USAGE);
    EXPECT_EQ(fail_text(p, "--max-insns needs a number, not '%s'", "1\x1b[2J\n\t\x7f", &st),
              "entrysim: --max-insns needs a number, not '1\\x1b[2J\\n\\t\\x7f'\n"
              "Try 'entrysim --help'.\n");
    // UTF-8 and printable text pass as they are
    EXPECT_EQ(fail_text(p, "no file %s", "caf\xc3\xa9", &st),
              "entrysim: no file caf\xc3\xa9\nTry 'entrysim --help'.\n");
    // a message longer than any fixed buffer is written whole
    std::string big(10000, 'x');
    EXPECT_EQ(fail_text(p, "%s", big.c_str(), &st),
              "entrysim: " + big + "\nTry 'entrysim --help'.\n");
}

} // namespace
