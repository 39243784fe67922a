/* opts.h - the one options parser of the entrysim subcommands.
 *
 * A subcommand describes its options in a table and walks its argv with
 * es_opts_next, which handles the mechanics every command shares: long
 * options with a value given as `--name V` or `--name=V`, flags, `--`,
 * positional arguments (either ending the options, as PROGRAM does for
 * run and debug, or mixed with them), and repeated options (each
 * occurrence is returned).  Values are checked with the es_opt_* helpers;
 * usage errors print through es_opts_fail with the command's prefix and
 * trailer and return exit status 2. */
#ifndef ENTRYSIM_CLI_OPTS_H
#define ENTRYSIM_CLI_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ES_EX_OK 0
#define ES_EX_ERROR 1
#define ES_EX_USAGE 2

/* One row of a command's options table: what the parser accepts and what
 * its --help says, in one place (help.h prints the table). */
typedef struct es_opt {
    const char *name;  /* "--uarch", "-j" */
    const char *arg;   /* the value's name in --help ("LIST", "{conv}"); NULL: a
                          flag, which takes no value */
    int id;            /* what es_opts_next returns for it */
    const char *help;  /* what it does, for --help ({fields} as in help.h);
                          NULL: another name of the row before ("-h") */
} es_opt;

/* The rows of --help and -h, which every command takes. */
#define ES_OPT_HELP_ROWS(id) {"--help", NULL, id, "print this help"}, {"-h", NULL, id, NULL}

/* A subcommand: its name, its --help and its options table.  The command
 * list of `entrysim --help` and of the unknown-command error is the list
 * of these (commands.c). */
typedef struct es_cmd {
    const char *name;     /* "exposure" */
    const char *synopsis; /* what follows "entrysim " in usage lines ({fields}) */
    const char *about;    /* --help text between the usage line and the
                             options, or NULL */
    const es_opt *opts;
    size_t nopts;
    const char *footer;   /* --help text after the options, or NULL */
    int (*run)(int argc, char **argv);
    /* the words the command takes as its first argument ("init", "build"
     * of kernel), NULL-terminated, or NULL: the parser and the shell
     * completion read them */
    const char *const *words;
} es_cmd;

/* What es_opts_next returns besides an option's id (ids are >= 0). */
enum {
    ES_OPT_DONE = -1,    /* no more options: p->i is the first argument left */
    ES_OPT_ARG = -2,     /* a positional argument (p->arg), when p->mixed */
    ES_OPT_UNKNOWN = -3, /* p->arg is no option of the table */
    ES_OPT_NOVALUE = -4, /* p->name needs a value and argv ended */
    ES_OPT_EXTRA = -5,   /* p->name takes no value and got one (--flag=x) */
};

typedef struct es_opts {
    int argc;
    char **argv;
    const es_opt *table;
    size_t n;
    bool mixed;           /* positionals may sit between options (else the
                             first one ends them, as `--` does) */
    bool no_dashdash;     /* `--` is no end marker (an unknown option) */
    const char *prefix;   /* usage errors: "entrysim: debug: " */
    const char *trailer;  /* and after them: "Try 'entrysim debug --help'.\n";
                             NULL with cmd set: that line for cmd */
    const es_cmd *cmd;    /* the command parsed for, or NULL */
    /* set by es_opts_next */
    int i;                /* the next argv element */
    const char *arg;      /* the argv element just read */
    const char *val;      /* its value (NULL for a flag) */
    char name[40];        /* the option's name without "=value" */
} es_opts;

int es_opts_next(es_opts *p);

/* A parser for command c's table over argv, errors prefixed
 * "entrysim: " and followed by "Try 'entrysim NAME --help'." */
es_opts es_opts_for(const es_cmd *c, int argc, char **argv);

/* Prints prefix, the message (its control characters written visibly, as
 * es_escape_ctl: it quotes user input) and trailer on stderr; returns
 * ES_EX_USAGE. */
int es_opts_fail(const es_opts *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Numbers in [lo, hi]: decimal ints, unsigned 64-bit in C notation
 * (0x.. allowed, no sign), doubles (lo excluded when lo_open).  false for
 * an empty string, trailing characters or a value out of range. */
bool es_opt_int(const char *s, long lo, long hi, int *out);
bool es_opt_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out);
bool es_opt_double(const char *s, double lo, bool lo_open, double hi, double *out);

/* Index of s in the NULL-terminated list names, or -1. */
int es_opt_pick(const char *s, const char *const *names);

/* Writes the NULL-terminated list into buf with sep between its names and
 * last before the last one ("a, b or c": ", " and " or "); returns buf. */
const char *es_opt_join(const char *const *names, const char *sep, const char *last, char *buf,
                        size_t n);

#ifdef __cplusplus
}
#endif
#endif
