// cmd_util.h - runs a subcommand's entry point (cli/cmd_*.c, es_main)
// in-process with stdout and stderr redirected to temporary files, for the
// suites that test the command line (exposure, cli).
#ifndef ENTRYSIM_CMD_UTIL_H
#define ENTRYSIM_CMD_UTIL_H

#include <cstdio>
#include <string>
#include <unistd.h>
#include <vector>

struct CmdResult {
    int status;
    std::string out, err;
};

// The whole of the temporary file f, which is closed.
inline std::string cmd_slurp(FILE *f)
{
    std::string s;
    rewind(f);
    char b[4096];
    size_t n;
    while ((n = fread(b, 1, sizeof b, f)) > 0)
        s.append(b, n);
    fclose(f);
    return s;
}

inline CmdResult cmd(int (*fn)(int, char **), std::vector<std::string> args)
{
    std::vector<char *> av;
    for (auto &a : args)
        av.push_back(a.data());
    av.push_back(nullptr);
    fflush(stdout);
    fflush(stderr);
    FILE *o = tmpfile(), *e = tmpfile();
    int so = dup(1), se = dup(2);
    dup2(fileno(o), 1);
    dup2(fileno(e), 2);
    CmdResult r;
    r.status = fn((int)args.size(), av.data());
    fflush(stdout);
    fflush(stderr);
    dup2(so, 1);
    dup2(se, 2);
    close(so);
    close(se);
    r.out = cmd_slurp(o);
    r.err = cmd_slurp(e);
    return r;
}

#endif
