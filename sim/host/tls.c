/* tls.c - thread-local storage and futexes: arch_prctl's FS/GS bases,
 * i386's set_thread_area / get_thread_area GDT slots (and a clone child's
 * CLONE_SETTLS descriptor; struct user_desc, shared with ldt.c), and the
 * futex operations, whose waits and wakes between threads thread.c keeps.
 */
#include <stdio.h>
#include <string.h>

#include "host_int.h"
#include "task.h"
#include "mem.h"

#define ARCH_SET_GS 0x1001
#define ARCH_SET_FS 0x1002
#define ARCH_GET_FS 0x1003
#define ARCH_GET_GS 0x1004
#define ARCH_GET_CPUID 0x1011
#define ARCH_SET_CPUID 0x1012

static int64_t do_arch_prctl(es_machine *m, const es_scall *c, int code, uint64_t arg)
{
    if (code == ARCH_GET_CPUID)
        return 1; /* CPUID is never made to fault */
    if (code == ARCH_SET_CPUID)
        return arg ? 0 : -ENODEV; /* no CPUID faulting support */
    if (c->abi == ES_ABI_I386)
        return -EINVAL; /* compat arch_prctl knows only the CPUID codes */
    switch (code) {
    case ARCH_SET_FS:
    case ARCH_SET_GS: {
        if (arg >= 0x7ffffffff000ull) /* TASK_SIZE_MAX */
            return -EPERM;
        int s = code == ARCH_SET_FS ? ES_SEG_FS : ES_SEG_GS;
        m->seg[s].sel = 0; /* Linux loads a null selector, then the base */
        m->seg[s].base = arg;
        return 0;
    }
    case ARCH_GET_FS:
    case ARCH_GET_GS: {
        uint8_t v[8];
        es_st64(v, m->seg[code == ARCH_GET_FS ? ES_SEG_FS : ES_SEG_GS].base);
        return es_hs_put(m, c, arg, v, 8);
    }
    default:
        return -EINVAL;
    }
}

#define GDT_TLS_MIN 12
#define GDT_TLS_MAX 14

uint64_t es_hs_user_desc_to_raw(const uint8_t *u)
{
    uint32_t base = es_ld32(u + 4), limit = es_ld32(u + 8), fl = es_ld32(u + 12);
    uint32_t seg_32bit = fl & 1, contents = (fl >> 1) & 3, ro = (fl >> 3) & 1,
             pages = (fl >> 4) & 1, notp = (fl >> 5) & 1, useable = (fl >> 6) & 1;
    /* LDT_empty: a "clear this entry" request */
    if (!base && !limit && !contents && ro && !seg_32bit && !pages && notp && !useable)
        return 0;
    uint64_t type = ((ro ^ 1) << 1) | (contents << 2) | 1; /* accessed set, as 4.17 */
    uint64_t d = (limit & 0xffff) | (uint64_t)(base & 0xffffff) << 16;
    d |= type << 40;
    d |= 1ull << 44;               /* S: code/data */
    d |= 3ull << 45;               /* DPL 3 */
    d |= (uint64_t)(notp ^ 1) << 47;
    d |= (uint64_t)((limit >> 16) & 0xf) << 48;
    d |= (uint64_t)useable << 52;
    d |= (uint64_t)seg_32bit << 54;
    d |= (uint64_t)pages << 55;
    d |= (uint64_t)(base >> 24) << 56;
    return d;
}

/* The base and the (unscaled) limit fields of raw descriptor d. */
static uint32_t desc_base(uint64_t d)
{
    return (uint32_t)((d >> 16) & 0xffffff) | (uint32_t)(d >> 56) << 24;
}

static uint32_t desc_limit(uint64_t d)
{
    return (uint32_t)(d & 0xffff) | (uint32_t)((d >> 48) & 0xf) << 16;
}

void es_hs_raw_to_user_desc(uint64_t d, uint32_t idx, uint8_t *u)
{
    memset(u, 0, 16);
    es_st32(u, idx);
    uint32_t base = desc_base(d), limit = desc_limit(d);
    uint32_t type = (d >> 40) & 0xf;
    uint32_t fl = (uint32_t)((d >> 54) & 1) | ((type >> 2) & 3) << 1 | (((type >> 1) & 1) ^ 1) << 3 |
                  (uint32_t)((d >> 55) & 1) << 4 | (uint32_t)(((d >> 47) & 1) ^ 1) << 5 |
                  (uint32_t)((d >> 52) & 1) << 6;
    if (!d)
        fl = 1u << 3 | 1u << 5; /* read_exec_only, seg_not_present */
    es_st32(u + 4, base);
    es_st32(u + 8, limit);
    es_st32(u + 12, fl);
}

/* A segment register that holds sel takes descriptor d's base, limit and
 * attributes, as a reload from the GDT would. */
static void reload_seg(es_segreg *s, uint16_t sel, uint64_t d, uint64_t *base)
{
    if (s->sel != sel)
        return;
    *base = desc_base(d);
    uint32_t lim = desc_limit(d);
    s->limit = (d >> 55) & 1 ? lim << 12 | 0xfff : lim;
    s->attr = (uint16_t)(((d >> 40) & 0xff) | ((d >> 52) & 0xf) << 8);
}

static int64_t do_set_thread_area(es_machine *m, const es_scall *c, uint64_t uinfo)
{
    uint8_t u[16];
    int r = es_hs_get(m, c, u, uinfo, 16);
    if (r)
        return r;
    uint32_t idx = es_ld32(u);
    if (idx == 0xffffffffu) {
        /* the first free TLS slot, reported back to the caller */
        for (idx = GDT_TLS_MIN; idx <= GDT_TLS_MAX && m->gdt[idx]; idx++)
            ;
        if (idx > GDT_TLS_MAX)
            return -ESRCH;
        uint8_t v[4];
        es_st32(v, idx);
        r = es_hs_put(m, c, uinfo, v, 4);
        if (r)
            return r;
    }
    if (idx < GDT_TLS_MIN || idx > GDT_TLS_MAX)
        return -EINVAL;
    uint64_t d = es_hs_user_desc_to_raw(u);
    m->gdt[idx] = d;
    /* a segment register holding this selector is reloaded, as
     * do_set_thread_area does for the current task */
    uint16_t sel = (uint16_t)(idx << 3 | 3);
    static const int segs[4] = {ES_SEG_DS, ES_SEG_ES, ES_SEG_FS, ES_SEG_GS};
    for (int i = 0; i < 4; i++)
        reload_seg(&m->seg[segs[i]], sel, d, &m->seg[segs[i]].base);
    return 0;
}

/* clone(CLONE_SETTLS) from an i386 process: tls is a struct user_desc for
 * the child (copy_thread_tls calls do_set_thread_area(p, -1, tls, 0):
 * no slot is allocated, so the entry must name one).  The child's GS or
 * FS, if it holds that selector, is loaded from the new descriptor when
 * it first runs (__switch_to's load_gs_index of the TLS entries). */
int64_t es_hs_clone_tls32(es_machine *m, const es_scall *c, uint64_t uinfo, es_tctx *x)
{
    uint8_t u[16];
    int r = es_hs_get(m, c, u, uinfo, 16);
    if (r)
        return r;
    uint32_t idx = es_ld32(u);
    if (idx < GDT_TLS_MIN || idx > GDT_TLS_MAX)
        return -EINVAL;
    uint64_t d = es_hs_user_desc_to_raw(u);
    x->tls[idx - GDT_TLS_MIN] = d;
    uint16_t sel = (uint16_t)(idx << 3 | 3);
    reload_seg(&x->gs, sel, d, &x->user_gs_base);
    reload_seg(&x->fs, sel, d, &x->fs.base);
    reload_seg(&x->ds, sel, d, &x->ds.base);
    reload_seg(&x->es, sel, d, &x->es.base);
    return 0;
}

static int64_t do_get_thread_area(es_machine *m, const es_scall *c, uint64_t uinfo)
{
    uint8_t u[16];
    int r = es_hs_get(m, c, u, uinfo, 4);
    if (r)
        return r;
    uint32_t idx = es_ld32(u);
    if (idx < GDT_TLS_MIN || idx > GDT_TLS_MAX)
        return -EINVAL;
    es_hs_raw_to_user_desc(m->gdt[idx], idx, u);
    return es_hs_put(m, c, uinfo, u, 16);
}

/* ---- futex ---- */

#define FUTEX_CLOCK_REALTIME 256

/* The wait's end on the guest monotonic clock (0 = none): FUTEX_WAIT's
 * timeout is relative; FUTEX_WAIT_BITSET's absolute, on CLOCK_MONOTONIC
 * or with FUTEX_CLOCK_REALTIME on CLOCK_REALTIME (futex(2)). */
static int futex_until(es_machine *m, const es_scall *c, int op, uint64_t utime, int64_t *until)
{
    *until = 0;
    if (!utime)
        return 0;
    int64_t sec, nsec;
    int r = es_hs_get_timespec(m, c, utime, &sec, &nsec);
    if (r)
        return r;
    if (sec < 0 || nsec < 0 || nsec >= 1000000000)
        return -EINVAL;
    int64_t ns = sec > INT64_MAX / 4000000000 ? INT64_MAX / 4 : sec * 1000000000 + nsec;
    int64_t mono = es_hs_clock_mono(m);
    if ((op & 0x7f) == 0)
        *until = mono + ns;
    else if (op & FUTEX_CLOCK_REALTIME)
        *until = mono + (ns - es_hs_clock_real(m));
    else
        *until = ns;
    if (*until <= 0)
        *until = 1; /* already passed: a wait that times out at once */
    return 0;
}

/* FUTEX_WAKE_OP: the operation on *uaddr2, then whether its old value
 * passes the comparison (which decides the second wake). */
static int wake_op(es_machine *m, const es_scall *c, uint64_t uaddr2, uint32_t val3, bool *wake2)
{
    uint8_t b[4];
    if (uaddr2 & 3)
        return -EINVAL;
    int r = es_hs_get(m, c, b, uaddr2, 4);
    if (r)
        return r;
    uint32_t old = es_ld32(b), oparg = (val3 >> 12) & 0xfff, cmparg = val3 & 0xfff, nv;
    unsigned fop = (val3 >> 28) & 0xf, cmp = (val3 >> 24) & 0xf;
    if (fop & 8)
        oparg = oparg < 32 ? 1u << oparg : 0;
    switch (fop & 7) {
    case 0: nv = oparg; break;
    case 1: nv = old + oparg; break;
    case 2: nv = old | oparg; break;
    case 3: nv = old & ~oparg; break;
    case 4: nv = old ^ oparg; break;
    default: return -ENOSYS;
    }
    int32_t o = (int32_t)old, a = (int32_t)(cmparg << 20) >> 20; /* sign-extended 12 bits */
    switch (cmp) {
    case 0: *wake2 = o == a; break;
    case 1: *wake2 = o != a; break;
    case 2: *wake2 = o < a; break;
    case 3: *wake2 = o <= a; break;
    case 4: *wake2 = o > a; break;
    case 5: *wake2 = o >= a; break;
    default: return -ENOSYS;
    }
    es_st32(b, nv);
    return es_hs_put(m, c, uaddr2, b, 4);
}

static int64_t do_futex(es_machine *m, const es_scall *c, uint64_t uaddr, int op, uint32_t val,
                        uint64_t utime, uint64_t uaddr2, uint32_t val3)
{
    int cmd = op & 0x7f; /* without FUTEX_PRIVATE_FLAG and FUTEX_CLOCK_REALTIME */
    if (uaddr & 3)
        return -EINVAL;
    int nr2 = (int)(uint32_t)utime; /* REQUEUE, CMP_REQUEUE, WAKE_OP: val2 */
    uint8_t b[4];
    switch (cmd) {
    case 0: /* FUTEX_WAIT */
    case 9: /* FUTEX_WAIT_BITSET */ {
        if (cmd == 9 && !val3)
            return -EINVAL;
        int64_t until;
        int r = futex_until(m, c, op, utime, &until);
        return r ? r : es_futex_wait(m, c, uaddr, val, until, cmd == 9 ? val3 : ~0u);
    }
    case 1:  /* FUTEX_WAKE */
    case 10: /* FUTEX_WAKE_BITSET */
        if (cmd == 10 && !val3)
            return -EINVAL;
        return es_futex_wake(m, uaddr, (int)(val > INT32_MAX ? INT32_MAX : val),
                             cmd == 10 ? val3 : ~0u);
    case 3: /* FUTEX_REQUEUE */
        return es_futex_requeue(m, uaddr, (int)val, uaddr2, nr2);
    case 4: { /* FUTEX_CMP_REQUEUE */
        int r = es_hs_get(m, c, b, uaddr, 4);
        if (r)
            return r;
        if (es_ld32(b) != val3)
            return -EAGAIN;
        return es_futex_requeue(m, uaddr, (int)val, uaddr2, nr2);
    }
    case 5: { /* FUTEX_WAKE_OP */
        bool wake2 = false;
        int r = wake_op(m, c, uaddr2, val3, &wake2);
        if (r)
            return r;
        int64_t n = es_futex_wake(m, uaddr, (int)val, ~0u);
        return n + (wake2 ? es_futex_wake(m, uaddr2, nr2, ~0u) : 0);
    }
    default:
        return -ENOSYS;
    }
}


/* ---- services ---- */

ES_SYS(arch_prctl) { return do_arch_prctl(m, c, (int)a[0], a[1]); }
/* i386 only: the 64-bit table's rows are holes */
ES_SYS(set_thread_area) { return do_set_thread_area(m, c, a[0]); }
ES_SYS(get_thread_area) { return do_get_thread_area(m, c, a[0]); }

ES_SYS(futex)
{
    return do_futex(m, c, a[0], (int)a[1], (uint32_t)a[2], a[3], a[4], (uint32_t)a[5]);
}
