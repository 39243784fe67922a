/* timing.h - the cycle model: an out-of-order core parameterised per
 * microarchitecture (tables/uarch/), attached to a machine as an observer.
 *
 * Off by default: nothing here runs unless es_timing_attach() is called, so
 * functional runs keep the plain loop.  With it attached every retired
 * instruction (user and guest kernel, including the privileged transitions
 * costed from tables/uarch/<uarch>.priv.tsv) advances the model's clock.
 * Deterministic: the same instruction stream gives the same cycles.
 */
#ifndef ENTRYSIM_TIMING_H
#define ENTRYSIM_TIMING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "machine.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct es_timing es_timing;

/* The built-in microarchitectures, NULL-terminated ("znver4", "skylake"). */
const char *const *es_timing_uarchs(void);

/* The built-in model of a CPU ("AMD" or "Intel", CPUID's displayed family
 * and model): the uarch whose .cfg lists it under cpu.match, or NULL. */
const char *es_timing_uarch_for_cpu(const char *vendor, unsigned family, unsigned model);

/* Creates a model of `uarch` from the tables built into the binary.
 * Returns NULL with a message in err (unknown name, allocation failure). */
es_timing *es_timing_new(const char *uarch, char *err, size_t errlen);
void es_timing_free(es_timing *t);

/* Attaches the model to m as an observer; every instruction m retires from
 * then on is costed.  Returns 0, or -1 when m's observer table is full.
 * Observers attached after it see es_timing_cycles() already updated for
 * the instruction they are told about. */
int es_timing_attach(es_timing *t, es_machine *m);

/* Cycle at which the most recently retired instruction retired (0 before
 * any); never decreases. */
uint64_t es_timing_cycles(const es_timing *t);

/* Retire-time difference between the last retired instruction and the one
 * before it: the "cycles per instruction" a debugger shows. */
uint64_t es_timing_last_cost(const es_timing *t);

typedef struct es_timing_stats {
    uint64_t cycles, insns, uops;
    uint64_t branches, mispredicts;
    uint64_t l1i_misses, l1d_misses, l2_misses, l3_misses;
    uint64_t itlb_misses, dtlb_misses;
    uint64_t stlf;        /* loads served by store-to-load forwarding */
    uint64_t stlf_fail;   /* loads overlapping a queued store they could not
                           * take data from (waited for its commit) */
    uint64_t memrename;   /* loads renamed to a store's data register */
    uint64_t serialising; /* serialising / privileged transitions costed from the table */
    /* --speculate (es_timing_set_speculate): wrong-path windows run,
     * instructions executed in them, data-cache lines they filled (L1D
     * misses of wrong-path loads) */
    uint64_t spec_windows, spec_insns, spec_fills;
} es_timing_stats;

void es_timing_get_stats(const es_timing *t, es_timing_stats *out);

/* Wrong-path execution after mispredicted conditional branches (off by
 * default; timing/speculate.c says what is modelled). */
void es_timing_set_speculate(es_timing *t, bool on);
/* One wrong-path instruction, as a front end shows it: where it was,
 * whether it started before the branch resolved, and the linear address
 * of the cache line its load filled (UINT64_MAX: none). */
typedef struct es_spec_insn {
    uint64_t rip;
    bool executed;
    uint64_t filled;
} es_spec_insn;
/* Called for each wrong-path instruction of a window, then with NULL
 * when the window is squashed (the debugger shows the last one). */
typedef void (*es_spec_fn)(void *ctx, const es_spec_insn *i);
void es_timing_set_spec_hook(es_timing *t, es_spec_fn fn, void *ctx);

/* Its counts so far: windows, transient instructions, lines filled. */
void es_timing_spec_counts(const es_timing *t, uint64_t out[3]);

/* Steady-state cycles per iteration of the basic block code[0..len) in
 * `mode` (ES_MODE_64 / ES_MODE_32), BHive's definition (registers pointing
 * into a region mapped on demand, block unrolled and looped).  Returns 0 and
 * sets *cycles, or -1 with a message in err (does not decode, control flow,
 * privileged...). */
int es_timing_throughput(const char *uarch, const uint8_t *code, size_t len, int mode,
                         double *cycles, char *err, size_t errlen);

/* The same, and when per_iter is given the model's event counts of the
 * timed steady-state trips divided by their iteration count (cycles =
 * *cycles; every other field is a per-iteration average times 1000, so
 * fractions survive in integers). */
int es_timing_throughput_stats(const char *uarch, const uint8_t *code, size_t len, int mode,
                               double *cycles, es_timing_stats *per_iter, char *err,
                               size_t errlen);


/* ---- per-instruction stage cycles (pipeline traces) ----
 *
 * A tracer sees every instruction the model costs, with the cycles the
 * model computed for it.  Off unless es_timing_set_tracer() installed one:
 * the model then does no trace work but one test per instruction and per
 * port reservation.  Cycles never go backwards between the stages of one
 * instruction (fetch <= decode <= dispatch <= issue <= complete <= retire),
 * and `fetch` never decreases from one instruction to the next (the front
 * end works in program order), so a writer can emit events in cycle order
 * by holding back those later than the newest fetch. */
#define ES_TIMING_MAXUOPS 12

/* One port reservation: a uop (or the load/store unit's pseudo-port use)
 * busy `occ` cycles from `cycle` on port `port` (es_timing_port_name). */
typedef struct es_timing_uop {
    uint64_t cycle;
    uint16_t occ;
    uint8_t port;
} es_timing_uop;

typedef struct es_timing_insn {
    uint64_t rip;
    uint64_t fetch;    /* the front end starts on it (after any redirect) */
    uint64_t decode;   /* decoded (L1i/ITLB misses included): ready for dispatch */
    uint64_t dispatch; /* renamed and sent to the scheduler (ROB entry taken) */
    uint64_t issue;    /* its first uop issued to a port (= dispatch without uops) */
    uint64_t complete; /* every uop done: it may retire */
    uint64_t retire;   /* retired (the cycle es_timing_cycles reports) */
    bool opcache;      /* delivered by the op cache, else the legacy decoders */
    bool serialising;  /* costed whole as a serialising transition (priv.tsv) */
    bool flushed;      /* faulted: never retired (retire = the delivery's end) */
    uint8_t nuops;     /* port reservations kept in uop[] (more are dropped) */
    es_timing_uop uop[ES_TIMING_MAXUOPS];
} es_timing_insn;

typedef struct es_timing_tracer {
    void *ctx;
    /* d is the instruction (NULL for a flushed one); m is after it ran */
    void (*insn)(void *ctx, es_machine *m, const es_insn *d, const es_timing_insn *ev);
} es_timing_tracer;

/* Installs tr (copied), or removes the tracer when tr is NULL. */
void es_timing_set_tracer(es_timing *t, const es_timing_tracer *tr);

/* Name of port p of the model ("ALU0", "AGU1", "Load"...); "?" if none. */
const char *es_timing_port_name(const es_timing *t, unsigned p);

#ifdef __cplusplus
}
#endif
#endif
