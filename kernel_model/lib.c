/* lib.c - the kernel's small runtime: the hypercalls to the simulator
 * (sim/hypercall.h), message formatting, user-memory access and the TLS
 * descriptors of set_thread_area. */
#include "kmodel.h"
#include "uaccess.h"

/* Entry data (kernel.lds): the SYSCALL entry saves the user RSP here before
 * it switches CR3, so under pti the user PGD maps this page. */
struct es_percpu es_percpu __attribute__((aligned(64), section(".entry.data")));

/* ES_HC_SYSCALL: RDI = abi, RSI = nr, RDX = address of six arguments.
 * A call that must wait for another task (ES_ERESCHED) sleeps in
 * schedule() and is made again when this task runs next, as a Linux body
 * sleeps on its wait queue; the abi and number are this task's own again
 * afterwards (the per-cpu copy belongs to whoever ran in between). */
long es_hc_syscall6(unsigned long a0, unsigned long a1, unsigned long a2,
                    unsigned long a3, unsigned long a4, unsigned long a5)
{
    unsigned long args[6] = {a0, a1, a2, a3, a4, a5};
    unsigned long abi = es_percpu.cur_abi, nr = es_percpu.cur_nr;
    long ret;
    for (;;) {
        __asm__ volatile("vmcall"
                         : "=a"(ret)
                         : "a"(ES_HC_SYSCALL), "D"(abi), "S"(nr), "d"(args)
                         : "memory", "cc");
        if (likely(ret != -ES_ERESCHED))
            return ret;
        es_schedule();
        es_set_current_syscall(abi, nr);
    }
}

void es_puts(const char *msg)
{
    unsigned long n = 0;
    while (msg[n])
        n++;
    __asm__ volatile("vmcall" ::"a"(ES_HC_PUTS), "D"(msg), "S"(n) : "memory", "cc");
}

void es_panic(const char *msg)
{
    for (;;)
        __asm__ volatile("vmcall" ::"a"(ES_HC_PANIC), "D"(msg) : "memory", "cc");
}

void es_signal(unsigned long vec, unsigned long err, unsigned long addr, unsigned long ip)
{
    __asm__ volatile("vmcall" ::"a"(ES_HC_SIGNAL), "D"(vec), "S"(err), "d"(addr), "c"(ip)
                     : "memory", "cc");
    /* other tasks go on (with one task the run has ended here) */
    es_task_dead();
}

char *es_fmt_hex(char *p, unsigned long v)
{
    *p++ = '0';
    *p++ = 'x';
    int started = 0;
    for (int sh = 60; sh >= 0; sh -= 4) {
        unsigned d = (v >> sh) & 15;
        if (d || started || sh == 0) {
            *p++ = (char)(d < 10 ? '0' + d : 'a' + d - 10);
            started = 1;
        }
    }
    *p = 0;
    return p;
}

char *es_fmt_str(char *p, const char *s)
{
    while (*s)
        *p++ = *s++;
    *p = 0;
    return p;
}

/* ---- user memory ---- */

int es_get_user_u64(u64 *dst, unsigned long uaddr)
{
    return get_user(*dst, (const u64 __user *)uaddr);
}

int es_get_user_u32(u32 *dst, unsigned long uaddr)
{
    return get_user(*dst, (const u32 __user *)uaddr);
}

struct es_extable {
    unsigned long insn, fixup;
};
extern const struct es_extable __start___ex_table[], __stop___ex_table[];

unsigned long es_search_exception_table(unsigned long ip)
{
    for (const struct es_extable *e = __start___ex_table; e < __stop___ex_table; e++)
        if (e->insn == ip)
            return e->fixup;
    return 0;
}

/* ---- TLS (set_thread_area) ---- */

extern u64 es_gdt[GDT_ENTRIES];

/* After the host accepted set_thread_area, the same descriptor goes into
 * this kernel's GDT, which is what the CPU reads once the kernel has done
 * LGDT (Linux: fill_ldt / set_tls_desc in arch/x86/kernel/tls.c). */
void es_tls_update(unsigned long u_info)
{
    u32 w[4];
    for (int i = 0; i < 4; i++)
        if (es_get_user_u32(&w[i], u_info + 4 * i))
            return;
    u32 idx = w[0], base = w[1], limit = w[2], fl = w[3];
    if (idx < GDT_ENTRY_TLS_MIN || idx > GDT_ENTRY_TLS_MAX)
        return;
    u32 seg_32bit = fl & 1, contents = (fl >> 1) & 3, read_exec_only = (fl >> 3) & 1;
    u32 limit_in_pages = (fl >> 4) & 1, seg_not_present = (fl >> 5) & 1, useable = (fl >> 6) & 1;
    u64 d = 0;
    /* an "empty" user_desc clears the slot (LDT_empty) */
    if (!(base == 0 && limit == 0 && contents == 0 && read_exec_only == 1 && seg_32bit == 0 &&
          limit_in_pages == 0 && seg_not_present == 1 && useable == 0)) {
        u64 type = ((read_exec_only ^ 1) << 1) | (contents << 2) | 1;
        d = (limit & 0xffffull) | ((u64)(base & 0xffffff) << 16) | (type << 40) | (1ull << 44) |
            (3ull << 45) | ((u64)(seg_not_present ^ 1) << 47) | ((u64)((limit >> 16) & 0xf) << 48) |
            ((u64)useable << 52) | ((u64)seg_32bit << 54) | ((u64)limit_in_pages << 55) |
            ((u64)(base >> 24) << 56);
    }
    es_gdt[idx] = d;
}
