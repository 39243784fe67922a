/* traps.c - the C handler of exceptions 0-31.  A fault in user mode is
 * what Linux turns into a signal: delivered to the program's handler when
 * it has one (signal.c), else reported to the simulator with
 * ES_HC_SIGNAL, which ends the run as --direct mode would; instruction
 * fetches from the vsyscall page are emulated instead (arch/x86/mm/fault.c).
 * A fault in kernel mode resumes at its exception-table fixup (user-memory
 * access) or is a kernel panic (ES_HC_PANIC). */
#include "kmodel.h"

#define X86_TRAP_PF 14
#define X86_PF_USER 0x4
#define X86_PF_INSTR 0x10
#define VSYSCALL_ADDR 0xffffffffff600000UL

bool emulate_vsyscall(struct pt_regs *regs, unsigned long address);

static const char *const exc_names[32] = {
    "#DE", "#DB", "NMI", "#BP", "#OF", "#BR", "#UD", "#NM", "#DF", "#MF(9)", "#TS",
    "#NP", "#SS", "#GP", "#PF", "15",  "#MF", "#AC", "#MC", "#XM", "#VE", "#CP",
    "22",  "23",  "24",  "25",  "26",  "27",  "28",  "#VC", "#SX", "31",
};

__visible void es_do_exception(struct pt_regs *regs, unsigned long vec, unsigned long err);
__visible void es_do_exception(struct pt_regs *regs, unsigned long vec, unsigned long err)
{
    unsigned long addr = vec == X86_TRAP_PF ? read_cr2() : 0;
    unsigned long code = err == (unsigned long)-1 ? 0 : err;

    if (vec == ES_TIMER_VECTOR) { /* the tick: its work is the exit to user */
        es_exit_to_usermode(regs);
        return;
    }

    if (regs->cs & 3) {
        if (vec == X86_TRAP_PF && (code & (X86_PF_USER | X86_PF_INSTR)) == (X86_PF_USER | X86_PF_INSTR) &&
            (addr & ~0xfffUL) == VSYSCALL_ADDR && emulate_vsyscall(regs, addr))
            return;
        /* a handler takes it (signal.c builds its frame), or it kills */
        if (es_force_sig_fault(regs, vec, code, addr))
            return;
        es_signal(vec, code, addr, regs->ip);
    }

    unsigned long fixup = es_search_exception_table(regs->ip);
    if (fixup) {
        regs->ip = fixup;
        return;
    }

    char msg[160], *p = msg;
    p = es_fmt_str(p, "kernel-mode exception ");
    p = es_fmt_str(p, vec < 32 ? exc_names[vec] : "(interrupt)");
    p = es_fmt_str(p, " error ");
    p = es_fmt_hex(p, code);
    p = es_fmt_str(p, " at rip ");
    p = es_fmt_hex(p, regs->ip);
    if (vec == X86_TRAP_PF) {
        p = es_fmt_str(p, " cr2 ");
        p = es_fmt_hex(p, addr);
    }
    es_panic(msg);
}
