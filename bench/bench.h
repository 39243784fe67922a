/* bench.h - internals of `entrysim bench` (matrix.c), shared by its files
 * and by tests/test_bench.cc.  Not a public interface of entrysim. */
#ifndef ENTRYSIM_BENCH_BENCH_H
#define ENTRYSIM_BENCH_BENCH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- TOML subset (bench_toml.c) ------------------------------------------
 * Accepted: comments (#), [table] and [a.b] headers of bare keys
 * (A-Za-z0-9_-), `key = value` with value a basic "string" (escapes \" \\
 * \n \t), a decimal integer, true/false, or an array of basic strings (may
 * span lines, trailing comma allowed).  Anything else is an error naming
 * the line.  Duplicate keys and tables are errors. */
enum es_tv_type { ES_TV_STRING, ES_TV_INT, ES_TV_BOOL, ES_TV_ARRAY };

typedef struct es_tkey {
    char *table; /* "" for the root table */
    char *key;
    int line;
    enum es_tv_type type;
    char *str;   /* ES_TV_STRING */
    long long i; /* ES_TV_INT, ES_TV_BOOL (0/1) */
    char **arr;  /* ES_TV_ARRAY */
    size_t narr;
    int used; /* set by the consumer; unused keys are reported */
} es_tkey;

typedef struct es_toml {
    es_tkey *keys;
    size_t nkeys;
    char **tables; /* every [header] in order, with its line */
    int *table_lines;
    size_t ntables;
} es_toml;

/* Parses text (NUL-terminated).  Returns 0, or -1 with a message
 * "LINE: reason" in err. */
int es_toml_parse(const char *text, es_toml *out, char *err, size_t errlen);
void es_toml_free(es_toml *t);
/* The key in table (NULL if absent); marks it used. */
es_tkey *es_toml_get(es_toml *t, const char *table, const char *key);

/* ---- JSON reader (bench_json.c) ------------------------------------------ */
enum es_jtype { ES_J_NULL, ES_J_BOOL, ES_J_NUM, ES_J_STR, ES_J_ARR, ES_J_OBJ };

typedef struct es_json {
    enum es_jtype type;
    double num;
    int boolean;
    char *str;               /* ES_J_STR */
    struct es_json *items;   /* ES_J_ARR / ES_J_OBJ values */
    char **keys;             /* ES_J_OBJ */
    size_t n;
} es_json;

/* Parses a whole document (depth at most 64).  Returns a tree to free with
 * es_json_free, or NULL with a reason in err. */
es_json *es_json_parse(const char *text, size_t len, char *err, size_t errlen);
void es_json_free(es_json *j);
/* Member `key` of an object (NULL if j is not an object or lacks it). */
const es_json *es_json_get(const es_json *j, const char *key);
/* Number at member key, or -1 when absent / not a number. */
double es_json_num(const es_json *j, const char *key);
/* Writes s as a JSON string literal. */
void es_json_write_str(FILE *f, const char *s);

/* ---- the matrix (matrix.c) ------------------------------------------------ */
#define ES_BENCH_NPHASES 7
extern const char *const es_bench_phase_names[ES_BENCH_NPHASES];

enum es_axis { AX_KERNEL, AX_ENTRY, AX_MITIGATIONS, AX_SYSCALL, AX_UARCH, AX_CPU, AX_WORKLOAD,
               AX_COUNT };
extern const char *const es_bench_axis_names[AX_COUNT];

typedef struct es_workload {
    char *name;
    char *program;       /* NULL: the built-in sysloop (binary chosen by entry) */
    char **args;         /* with {entry} {syscall} {iterations} */
    size_t nargs;
    char **entries;      /* supported entry kinds (NULL = all) */
    size_t nentries;
    char **syscalls;     /* supported syscalls (NULL = all) */
    size_t nsyscalls;
} es_workload;

typedef struct es_matrix {
    char *name;
    char *axes[AX_COUNT][64]; /* values per axis */
    size_t naxis[AX_COUNT];
    long long iterations;
    es_workload *workloads;
    size_t nworkloads;
} es_matrix;

/* Reads and checks a matrix file; -1 with "FILE:LINE: reason" in err. */
int es_matrix_load(const char *path, es_matrix *m, char *err, size_t errlen);
int es_matrix_parse(const char *text, const char *name, es_matrix *m, char *err, size_t errlen);
void es_matrix_free(es_matrix *m);

/* One cell of the cross product, with its figures once run. */
typedef struct es_cell {
    const char *v[AX_COUNT];
    long long iterations;
    const es_workload *wl;
    const char *skip; /* non-NULL: impossible combination, why */
    char key[17];     /* hex FNV-1a 64 of config + versions */
    /* CELL_ELSEWHERE: in another shard of a --shard run (not run here) */
    enum { CELL_PENDING, CELL_DONE, CELL_REUSED, CELL_FAILED, CELL_ELSEWHERE } state;
    char note[256];   /* failure reason */
    /* figures (whole run, from the timing report) */
    double cycles, instructions, calls, call_cycles, phases[ES_BENCH_NPHASES];
} es_cell;

/* Expands the cross product in axis order (kernel outermost); impossible
 * cells come back with skip set.  Returns the count; *out is malloc'd. */
size_t es_matrix_cells(const es_matrix *m, es_cell **out);
/* Why a combination cannot run, or NULL. */
const char *es_cell_impossible(const es_cell *c);

/* strdup; whole file as a NUL-terminated string (at most 64 MiB; NULL with
 * "PATH: reason" in err). */
char *es_bench_sdup(const char *s);
char *es_bench_read_file(const char *path, size_t *len, char *err, size_t errlen);

/* FNV-1a 64 (an incremental hash: pass the previous value, start from
 * ES_FNV_INIT). */
#define ES_FNV_INIT 0xcbf29ce484222325ULL
uint64_t es_fnv1a(uint64_t h, const void *data, size_t n);

/* Figures of a timing report (docs/TIMING.md): whole-run totals, and the
 * per-syscall row for `syscall` when the report has one (else all
 * syscalls).  Returns 0 or -1 with err. */
int es_bench_read_report(const char *json, size_t len, const char *syscall, es_cell *c,
                         char *err, size_t errlen);

/* ---- outputs (bench_out.c) ------------------------------------------------ */
int es_bench_write_csv(const char *path, const es_cell *cells, size_t n);
int es_bench_write_json(const char *path, const es_matrix *m, const es_cell *cells, size_t n,
                        const char *version);
int es_bench_write_svg(const char *path, const es_matrix *m, const es_cell *cells, size_t n);

#ifdef __cplusplus
}
#endif
#endif
