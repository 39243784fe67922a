/* setup.c - what startup_64 does before entering user mode: GDT with
 * Linux's selectors, the 64-bit TSS (RSP0 = top of the task stack), the IDT,
 * the SYSCALL/SYSENTER MSRs and the per-cpu GS base. */
#include "kmodel.h"
#include "signal_int.h"

extern char es_task_stack_top[];
extern const unsigned long es_image_patches; /* bootinfo.c: this image's ES_PATCHES */
extern const unsigned long es_exception_stubs[32];
void entry_SYSCALL_64(void);
void entry_SYSCALL_compat(void);
void entry_SYSENTER_compat(void);
void entry_INT80_compat(void);
void unexpected_interrupt(void);
void apic_timer_interrupt(void);

/* The 64-bit TSS (SDM Vol. 3A 7.7). */
struct es_tss {
    u32 reserved0;
    u64 rsp0, rsp1, rsp2;
    u64 reserved1;
    u64 ist[7];
    u64 reserved2;
    u16 reserved3;
    u16 io_bitmap_base;
} __attribute__((packed));
_Static_assert(sizeof(struct es_tss) == 104, "64-bit TSS is 104 bytes");
_Static_assert(__builtin_offsetof(struct es_tss, rsp0) == TSS_RSP0, "TSS.RSP0");

/* The descriptor tables and the TSS are entry data: the CPU reads them on
 * an interrupt or exception from user mode before the entry code can
 * switch CR3, so under pti the user PGD maps them (kernel.lds). */
#define __entry_data __attribute__((section(".entry.data")))

struct es_tss es_tss __attribute__((aligned(64))) __entry_data;

/* Linux's GDT_ENTRY_INIT(flags, 0, 0xfffff) values (arch/x86/kernel/cpu/common.c). */
#define GDT_FLAT(flags) (0xffffull | ((u64)((flags) & 0xf0ff) << 40) | (0xfull << 48))

u64 es_gdt[GDT_ENTRIES] __attribute__((aligned(64))) __entry_data = {
    [GDT_ENTRY_KERNEL32_CS] = GDT_FLAT(0xc09b),
    [GDT_ENTRY_KERNEL_CS] = GDT_FLAT(0xa09b),
    [GDT_ENTRY_KERNEL_DS] = GDT_FLAT(0xc093),
    [GDT_ENTRY_DEFAULT_USER32_CS] = GDT_FLAT(0xc0fb),
    [GDT_ENTRY_DEFAULT_USER_DS] = GDT_FLAT(0xc0f3),
    [GDT_ENTRY_DEFAULT_USER_CS] = GDT_FLAT(0xa0fb),
    /* per-cpu segment: LSL gives cpu | node << 12 = 0 (vgetcpu) */
    [GDT_ENTRY_CPUNODE] = 0x0040f50000000000ull,
};

struct es_gate {
    u16 off0, sel;
    u8 ist, type_attr;
    u16 off1;
    u32 off2, reserved;
};
_Static_assert(sizeof(struct es_gate) == 16, "64-bit gate is 16 bytes");

struct es_gate es_idt[256] __attribute__((aligned(4096))) __entry_data;

struct __attribute__((packed)) es_dtr {
    u16 limit;
    u64 base;
};

/* Interrupt gate (type 0xE: IF cleared on entry) with the given DPL. */
static void set_gate(int vec, unsigned long handler, int dpl)
{
    struct es_gate *g = &es_idt[vec];
    g->off0 = (u16)handler;
    g->sel = __KERNEL_CS;
    g->ist = 0;
    g->type_attr = (u8)(0x80 | dpl << 5 | 0xe);
    g->off1 = (u16)(handler >> 16);
    g->off2 = (u32)(handler >> 32);
    g->reserved = 0;
}

void es_setup(void);
void es_setup(void)
{
    if (es_boot_info.magic != ES_BOOT_MAGIC)
        es_panic("es_boot_info not filled in by the loader");
    if (es_boot_info.patches != es_image_patches)
        es_panic("es_boot_info.patches does not match the image");

    unsigned long top = (unsigned long)es_task_stack_top;
    es_percpu.top_of_stack = top;

    /* TSS: RSP0 for CPL3 -> CPL0 through the IDT; no I/O bitmap */
    es_tss.rsp0 = top;
    es_tss.io_bitmap_base = sizeof(struct es_tss);
    unsigned long tb = (unsigned long)&es_tss, tl = sizeof(struct es_tss) - 1;
    es_gdt[GDT_ENTRY_TSS] = (tl & 0xffff) | (tb & 0xffffff) << 16 | 0x89ull << 40 |
                            ((tl >> 16) & 0xf) << 48 | ((tb >> 24) & 0xff) << 56;
    es_gdt[GDT_ENTRY_TSS + 1] = tb >> 32;

    struct es_dtr gdtr = {sizeof es_gdt - 1, (u64)es_gdt};
    __asm__ volatile("lgdt %0" ::"m"(gdtr) : "memory");
    /* CS is already __KERNEL_CS (the loader's entry state), the same
     * descriptor as in this GDT; reload the data segments.  User DS/ES:
     * __USER_DS for a 32-bit task, 0 for a 64-bit one (start_thread). */
    unsigned short uds = es_boot_info.user_cs == __USER32_CS ? __USER_DS : 0;
    __asm__ volatile("mov %0, %%ss" ::"r"((unsigned short)__KERNEL_DS));
    __asm__ volatile("mov %0, %%ds; mov %0, %%es" ::"r"(uds));
    __asm__ volatile("ltr %w0" ::"r"((unsigned short)__TSS_SEL));

    for (int v = 0; v < 256; v++)
        set_gate(v, (unsigned long)unexpected_interrupt, 0);
    for (int v = 0; v < 32; v++)
        set_gate(v, es_exception_stubs[v], 0);
    set_gate(3, es_exception_stubs[3], 3); /* int3 from user mode */
    set_gate(4, es_exception_stubs[4], 3); /* into (Linux: system gate) */
    set_gate(0x80, (unsigned long)entry_INT80_compat, 3);
    set_gate(ES_TIMER_VECTOR, (unsigned long)apic_timer_interrupt, 0);
    struct es_dtr idtr = {sizeof es_idt - 1, (u64)es_idt};
    __asm__ volatile("lidt %0" ::"m"(idtr) : "memory");

    /* PCIDs when the CPU has them (Linux's setup_pcid()); CR3's PCID is 0
     * here, as setting CR4.PCIDE requires.  Only pti's CR3 switches use
     * other PCIDs (calling.h, ES_ALT_PCID: the simulator patches that in
     * from the same CPUID bit). */
    u32 a = 1, b, c = 0, d;
    __asm__ volatile("cpuid" : "+a"(a), "=b"(b), "+c"(c), "=d"(d));
    if (c & X86_FEATURE_PCID_ECX) {
        unsigned long cr4;
        __asm__ volatile("mov %%cr4, %0" : "=r"(cr4));
        __asm__ volatile("mov %0, %%cr4" ::"r"(cr4 | X86_CR4_PCIDE) : "memory");
    }

    /* syscall_init() (arch/x86/kernel/cpu/common.c) */
    wrmsr(MSR_STAR, (u64)__USER32_CS << 48 | (u64)__KERNEL_CS << 32);
    wrmsr(MSR_LSTAR, (u64)entry_SYSCALL_64);
    wrmsr(MSR_CSTAR, (u64)entry_SYSCALL_compat);
    wrmsr(MSR_IA32_SYSENTER_CS, __KERNEL_CS);
    wrmsr(MSR_IA32_SYSENTER_ESP, top);
    wrmsr(MSR_IA32_SYSENTER_EIP, (u64)entry_SYSENTER_compat);
    wrmsr(MSR_SYSCALL_MASK, X86_EFLAGS_TF | X86_EFLAGS_DF | X86_EFLAGS_IF | X86_EFLAGS_IOPL |
                                X86_EFLAGS_AC | X86_EFLAGS_NT);
    wrmsr(MSR_EFER, rdmsr(MSR_EFER) | EFER_SCE | EFER_NX);
    wrmsr(MSR_TSC_AUX, 0); /* cpu 0, node 0 for RDTSCP/RDPID */

    /* GS: the per-cpu area now; startup_64's SWAPGS gives the user GS base
     * 0 and leaves the per-cpu area in KERNEL_GS_BASE for the entries. */
    wrmsr(MSR_GS_BASE, (u64)&es_percpu);
    wrmsr(MSR_KERNEL_GS_BASE, 0);

    es_fpu_boot();
    es_signal_init();
    es_sched_init();
}
