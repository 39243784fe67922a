/* systab.c - the generated syscall tables (see systab.h) and their
 * lookups.  The rows come from generated/es_host_services.h, written by
 * tables/gen_syscalls.py; nothing here names a syscall by hand. */
#include <string.h>

#include "host_int.h"
#include "systab.h"

#include "es_syscall_32.h" /* ES_NR_SYSCALLS_32 */
#include "es_syscall_64.h" /* ES_NR_SYSCALLS_64 */

static const es_sysrow g_rows64[ES_NR_SYSCALLS_64] = {
#define ES_SYSROW_64(nr, abi, name, nargs, fn) [nr] = {#name, nargs, ES_SYSROW_##abi, fn},
#include "es_host_services.h"
#undef ES_SYSROW_64
};

static const es_sysrow g_rows32[ES_NR_SYSCALLS_32] = {
#define ES_SYSROW_32(nr, name, nargs, fn) [nr] = {#name, nargs, ES_SYSROW_i386, fn},
#include "es_host_services.h"
#undef ES_SYSROW_32
};

const es_sysrow *es_sysrow_at(int abi, uint64_t nr)
{
    const es_sysrow *r = NULL;
    if (abi == ES_ABI_I386 && nr < ES_NR_SYSCALLS_32)
        r = &g_rows32[nr];
    else if (abi != ES_ABI_I386 && nr < ES_NR_SYSCALLS_64)
        r = &g_rows64[nr];
    return r && r->name ? r : NULL;
}

int es_sysrow_count(int abi)
{
    return abi == ES_ABI_I386 ? ES_NR_SYSCALLS_32 : ES_NR_SYSCALLS_64;
}

int es_sysrow_find(int abi, const char *name)
{
    int nr = -1, n = es_sysrow_count(abi);
    for (int i = 0; i < n; i++) {
        const es_sysrow *r = es_sysrow_at(abi, (uint64_t)i);
        if (!r || strcmp(r->name, name))
            continue;
        bool usable = abi == ES_ABI_I386 || r->abi == ES_SYSROW_common ||
                      r->abi == (abi == ES_ABI_X32 ? ES_SYSROW_x32 : ES_SYSROW_64);
        if (usable)
            nr = i; /* the last: an x32 row comes after the common one */
    }
    return nr;
}
