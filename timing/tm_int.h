/* tm_int.h - internals of the cycle model shared by the files of sim/timing/.
 *
 * tables.c  parses the embedded tables/uarch/ data (core parameters, per-form
 *           costs, privileged transitions) into tm_uarch;
 * model.c   the out-of-order core: per-instruction static info cached per
 *           decode-cache entry, then dispatch / issue / execute / retire
 *           times computed in program order at retire;
 * throughput.c  BHive-style steady-state block throughput and its command.
 */
#ifndef ENTRYSIM_TM_INT_H
#define ENTRYSIM_TM_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "timing.h"

#define TM_MAXPORTS 32  /* physical execution ports (pseudo-ports included) */
#define TM_MAXGROUPS 4  /* port groups per instruction form */

/* One set of uops of a form: n uops, each busy `occ` cycles on one port of
 * `mask` (occ > 1 = not pipelined, e.g. a divider). */
typedef struct tm_group {
    uint32_t mask;
    uint16_t n, occ;
} tm_group;

/* The cost of one instruction form (a row of <uarch>.llvm.tsv, possibly
 * overridden by .published.tsv / .measured.tsv). */
typedef struct tm_cost {
    uint16_t uops, lat;
    uint8_t load, store, ngroups;
    tm_group g[TM_MAXGROUPS];
} tm_cost;

typedef struct tm_row {
    char *form;     /* "add r64, imm8" */
    char *mnem;     /* "add" (after any "lock "/"rep " prefix) */
    tm_cost cost;
} tm_row;

/* Privileged / serialising transitions (<uarch>.priv.tsv, contract with
 * engineer P): the forms the model must cost, in this order. */
enum tm_priv {
    TP_SYSCALL, TP_SYSRET, TP_SYSENTER, TP_SYSEXIT, TP_INT, TP_IRETQ, TP_SWAPGS, TP_WRMSR,
    TP_RDMSR, TP_WRMSR_SPEC_CTRL, TP_MOV_CR3, TP_MOV_CR3_NOFLUSH, TP_MOV_CR_OTHER, TP_LFENCE,
    TP_MFENCE, TP_SFENCE, TP_CPUID, TP_RDTSC, TP_RDTSCP, TP_VMCALL, TP_LGDT, TP_LIDT, TP_LTR,
    TP_CLI, TP_STI, TP_INVLPG, TP_HLT, TP_EXCEPTION, TP_VERW, TP_COUNT, TP_NONE = 0xff
};
extern const char *const tm_priv_names[TP_COUNT];

typedef struct tm_priv_cost {
    uint32_t cycles;
    bool serialising; /* else pipelined: an ordinary instruction of latency `cycles` */
} tm_priv_cost;

/* Geometry and latency of one cache or TLB level. */
typedef struct tm_cache_cfg {
    uint32_t sets, ways, line_shift, latency;
} tm_cache_cfg;

/* Everything the model reads from tables/uarch/ for one microarchitecture. */
typedef struct tm_uarch {
    const char *name;
    /* front end and core widths */
    uint32_t fetch_bytes, decode_width, opcache_entries, opcache_ops, opcache_ways;
    uint32_t dispatch_width, retire_width, rob_entries;
    uint32_t sched_entries;
    uint32_t taken_branch_bubble; /* dead cycles after a taken branch */
    uint32_t taken_ends_group;    /* a taken branch is the last op of its dispatch cycle */
    uint32_t macro_fusion, move_elim, zero_idioms, stack_engine;
    uint32_t sbb_same_independent; /* sbb r, r reads only CF */
    /* load / store */
    uint32_t load_pipes, store_pipes, vec_store_pipes, agus;
    uint32_t store_occupancy; /* cycles a store holds its store pipe */
    uint32_t mem_ops_per_kcycle; /* sustained memory operations per 1000 cycles (0: AGUs only) */
    uint32_t store_pair_line; /* bytes (0: off): a scalar store to the same aligned chunk as the
                               * scalar store just before it shares that store's pipe slot */
    uint32_t load_queue, store_queue;
    uint32_t stlf_latency, stlf_fail_penalty, split_penalty;
    uint32_t memrename, memrename_latency, memrename_bases; /* bases: GPR bit mask */
    uint32_t complex_addr_latency; /* added to a load whose address is base+index+disp or scaled */
    uint32_t alias_penalty; /* an L1D access through a second linear alias of a physical line */
    uint32_t l1d_latency, l1d_fp_latency;
    uint32_t llvm_load_latency, llvm_fp_load_latency; /* what llvm rows include */
    uint32_t mem_latency;
    tm_cache_cfg l1i, l1d, l2, l3;
    tm_cache_cfg itlb1, itlb2, dtlb1, dtlb2;
    uint32_t pagewalk_latency;
    /* branch prediction */
    uint32_t bht_entries, btb_entries, ras_entries, mispredict_penalty;
    /* ports */
    int nports;
    char port_name[TM_MAXPORTS][16];
    uint32_t ld_mask, st_mask, stv_mask, ag_mask; /* the load/store unit's pseudo-ports */
    /* per-form costs */
    tm_row *rows;
    size_t nrows;
    uint32_t *hash; /* open addressing over rows by form string; size hmask+1 */
    uint32_t hmask;
    tm_cost dflt;   /* forms no table knows (default.* in the .cfg) */
    tm_priv_cost priv[TP_COUNT];
} tm_uarch;

/* Loads `name` from the embedded tables; 0 or -1 with a message. */
int tm_uarch_load(tm_uarch *u, const char *name, char *err, size_t errlen);
void tm_uarch_free(tm_uarch *u);
/* Row of a form string, NULL if the tables have no such form. */
const tm_row *tm_find_form(const tm_uarch *u, const char *form);
/* Best row for a mnemonic and operand kinds that are not an exact form
 * (imm8 vs imm32, r16 vs r32 ...); NULL when the mnemonic is unknown. */
const tm_row *tm_find_similar(const tm_uarch *u, const char *mnem, const char *const *kinds,
                              int nkinds);

#endif
