/* ldt.c - modify_ldt(2) and the process's LDT (arch/x86/kernel/ldt.c as
 * of Linux 4.17): read the LDT, read the default one, write an entry in
 * the old or the new mode.  The entries live in the process's state (a
 * fork copies them, exec and the process's end drop them) and the machine
 * reads them through m->ldt when a segment register is loaded with a
 * selector whose TI bit is set (sim/seg.c).
 */
#include <stdlib.h>
#include <string.h>

#include "host_int.h"

#define LDT_ENTRIES 8192 /* asm/ldt.h */
#define LDT_ENTRY_SIZE 8
/* the GDT slot Linux's set_ldt loads LDTR from (GDT_ENTRY_LDT, 64-bit) */
#define LDT_SELECTOR (10u << 3)

void es_hs_ldt_load(es_machine *m)
{
    struct es_host *h = m->host;
    m->ldt = h && h->ldt_n ? h->ldt : NULL;
    m->ldt_n = m->ldt ? h->ldt_n : 0;
    /* what LLDT leaves: SLDT reads the selector (limit as load_LDT_nolock
     * gives it; the table itself is not in guest memory) */
    if (m->ldt)
        m->ldtr = (es_segreg){.sel = LDT_SELECTOR, .limit = m->ldt_n * LDT_ENTRY_SIZE - 1,
                              .attr = 0x82};
    else
        m->ldtr = (es_segreg){0};
}

int es_hs_ldt_clone(struct es_host *dst, const struct es_host *src)
{
    dst->ldt = NULL;
    dst->ldt_n = 0;
    if (!src->ldt)
        return 0;
    if (!(dst->ldt = malloc(LDT_ENTRIES * LDT_ENTRY_SIZE)))
        return -ENOMEM;
    memcpy(dst->ldt, src->ldt, LDT_ENTRIES * LDT_ENTRY_SIZE);
    dst->ldt_n = src->ldt_n;
    return 0;
}

void es_hs_ldt_free(struct es_host *h)
{
    free(h->ldt);
    h->ldt = NULL;
    h->ldt_n = 0;
}

/* read_ldt: the entries in use, the rest of bytecount zero-filled; returns
 * bytecount (0 with no LDT at all). */
static int64_t read_ldt(es_machine *m, const es_scall *c, uint64_t ptr, uint64_t bytecount)
{
    struct es_host *h = m->host;
    if (!h->ldt)
        return 0;
    if (bytecount > LDT_ENTRIES * LDT_ENTRY_SIZE)
        bytecount = LDT_ENTRIES * LDT_ENTRY_SIZE;
    uint64_t have = (uint64_t)h->ldt_n * LDT_ENTRY_SIZE;
    if (have > bytecount)
        have = bytecount;
    uint8_t *buf = calloc(1, bytecount ? bytecount : 1);
    if (!buf)
        return -ENOMEM;
    memcpy(buf, h->ldt, have);
    int r = es_hs_put(m, c, ptr, buf, bytecount);
    free(buf);
    return r ? r : (int64_t)bytecount;
}

/* read_default_ldt: 128 zero bytes at most (the 64-bit kernel's size). */
static int64_t read_default_ldt(es_machine *m, const es_scall *c, uint64_t ptr, uint64_t n)
{
    static const uint8_t zero[128];
    if (n > sizeof zero)
        n = sizeof zero;
    int r = es_hs_put(m, c, ptr, zero, n);
    return r ? r : (int64_t)n;
}

/* write_ldt: one struct user_desc; `oldmode` (func 1) clears an entry
 * given base and limit 0 and drops the AVL bit, the new mode (0x11) keeps
 * it and takes LDT_empty as the clear request.  contents 3 (a conforming
 * code segment) only in the new mode and not present. */
static int64_t write_ldt(es_machine *m, const es_scall *c, uint64_t ptr, uint64_t bytecount,
                         bool oldmode)
{
    struct es_host *h = m->host;
    uint8_t u[16];
    if (bytecount != sizeof u)
        return -EINVAL;
    int r = es_hs_get(m, c, u, ptr, sizeof u);
    if (r)
        return r;
    uint32_t idx = es_ld32(u), base = es_ld32(u + 4), limit = es_ld32(u + 8);
    uint32_t fl = es_ld32(u + 12), contents = (fl >> 1) & 3, notp = (fl >> 5) & 1;
    if (idx >= LDT_ENTRIES)
        return -EINVAL;
    if (contents == 3 && (oldmode || !notp))
        return -EINVAL;
    uint64_t d = oldmode && !base && !limit ? 0 : es_hs_user_desc_to_raw(u);
    if (oldmode)
        d &= ~(1ull << 52); /* AVL */
    if (!h->ldt && !(h->ldt = calloc(LDT_ENTRIES, LDT_ENTRY_SIZE)))
        return -ENOMEM;
    h->ldt[idx] = d;
    if (idx + 1 > h->ldt_n)
        h->ldt_n = idx + 1;
    es_hs_ldt_load(m); /* install_ldt: the new table is live at once */
    return 0;
}

/* The ABI's return value is an int: Linux 4.17's SYSCALL_DEFINE3 casts it
 * to unsigned int, so a 64-bit caller sees an error zero-extended in RAX
 * (0x00000000ffffffea for -EINVAL), as the asmlinkage int it replaced
 * left it. */
ES_SYS(modify_ldt)
{
    int64_t r = -ENOSYS;
    switch ((int)a[0]) {
    case 0: r = read_ldt(m, c, a[1], a[2]); break;
    case 1: r = write_ldt(m, c, a[1], a[2], true); break;
    case 2: r = read_default_ldt(m, c, a[1], a[2]); break;
    case 0x11: r = write_ldt(m, c, a[1], a[2], false); break;
    default: break;
    }
    return (int64_t)(uint32_t)(int32_t)r;
}
