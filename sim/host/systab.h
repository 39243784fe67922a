/* systab.h - the syscall tables of each ABI as the machine library holds
 * them: number <-> name, arity and host service, one row per number,
 * generated from tables/syscall_64.tbl, syscall_32.tbl, syscall_params.tbl
 * and host_services.tbl (generated/es_host_services.h).
 *
 * This is the one lookup for syscall names: es_host_call dispatches
 * through it, and front ends and analyses name calls with it.
 */
#ifndef ENTRYSIM_SYSTAB_H
#define ENTRYSIM_SYSTAB_H

#include <stdint.h>

#include "machine.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The abi column of a row: common, 64 and x32 rows of the 64-bit table,
 * i386 for every row of the 32-bit table. */
enum es_sysrow_abi { ES_SYSROW_common, ES_SYSROW_64, ES_SYSROW_x32, ES_SYSROW_i386 };

struct es_scall; /* sim/host's per-call context */
typedef int64_t es_sys_fn(es_machine *m, const struct es_scall *c, const uint64_t *a);

typedef struct es_sysrow {
    const char *name;  /* NULL: no row has this number */
    int8_t nargs;      /* arity; -1 for a row without an entry point (a hole) */
    uint8_t abi;       /* enum es_sysrow_abi */
    es_sys_fn *service; /* host service (sim/host/), NULL: -ENOSYS */
} es_sysrow;

/* The row of number nr (x32 bit removed) in the table of abi (ES_ABI_X64
 * and ES_ABI_X32: the 64-bit table; ES_ABI_I386: the 32-bit one), or NULL
 * when the table has no such row. */
const es_sysrow *es_sysrow_at(int abi, uint64_t nr);

/* One past the highest number of abi's table (ES_NR_SYSCALLS_64 / _32):
 * with es_sysrow_at, iterates the rows in number order. */
int es_sysrow_count(int abi);

/* The number of `name` for a caller of abi, or -1: for ES_ABI_X64 the
 * common and 64 rows, for ES_ABI_X32 the x32 row where there is one, else
 * the common row (without the x32 bit), for ES_ABI_I386 the 32-bit table. */
int es_sysrow_find(int abi, const char *name);

#ifdef __cplusplus
}
#endif
#endif
