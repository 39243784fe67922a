/* measure.c - `entrysim measure-native`: real cycles of basic blocks on this
 * x86-64 host, the ground truth the timing model is scored against.
 *
 * Method (BHive: Chen et al., "BHive: A Benchmark Suite and Measurement
 * Framework for Validating x86-64 Basic Block Performance Models", IISWC
 * 2019), as the reference data in /work/shared/data was measured:
 *
 *  - The block is copied `unroll` times (default 50) into a freshly mapped
 *    code area, followed by `dec qword [rip+counter]; jnz top`; the loop
 *    counter lives in a data page right after the code, so the block keeps
 *    every general register.  The loop top is 64-byte aligned.
 *  - Before each run the harness saves the caller's RSP in its data page,
 *    resets x87 (FNINIT), MXCSR (0x1F80), the vector registers (VZEROALL:
 *    XMM/YMM zero) and DF (CLD), points every general register except RSP at
 *    R = 0x12345600 (BHive's value), the middle of a large region nobody maps, and RSP at
 *    R + 1 GiB in the same kind of region (so push/pop, leave and RSP drift
 *    cannot hurt the child, and stack accesses behave like the others).
 *  - Pages the block touches are mapped on demand by a SIGSEGV handler, all
 *    to one shared physical page (a memfd mapped MAP_SHARED|MAP_FIXED_NOREPLACE
 *    page by page), filled with the 8-byte pattern R so that pointers loaded
 *    from memory also point into the region.  A run during which a page was
 *    mapped is discarded and repeated: the first runs map the working set,
 *    the timed ones run without faults.
 *  - Each measurement times the loop run iters1 (100) and iters2 (200) times
 *    with LFENCE/RDTSC/RDTSCP around the call, alternating, `reps` (25) times
 *    each, and keeps the minima; ticks per block = (t2 - t1) / ((iters2 -
 *    iters1) * unroll), which cancels the call, the register setup and the
 *    loop entry and exit (the loop's own dec/jnz, once per `unroll` copies,
 *    remains and overlaps with the block).
 *  - The TSC does not count core cycles (it ticks at a fixed rate, about 0.70
 *    to 0.73 ticks per core cycle at this machine's boost clock) and there are
 *    no performance counters in this VM, so next to each block a chain of 16
 *    dependent `add rax, rax` (1 cycle of latency each, so 1 cycle per add;
 *    not `add rax, 1`, which Golden Cove's renamer folds) is
 *    measured the same way, its runs interleaved with the block's so that
 *    both minima see the same clock: cycles = block ticks / ticks per add.
 *    (Measuring the chain first and the block after it let frequency changes
 *    in between scatter results by 10-20% at the 90th percentile on this
 *    shared host; interleaved, two runs agree within 1.4%.)
 *  - Calibration + block are measured at least twice, and again (up to
 *    `tries`, default 4) until two measurements agree within noisy_pct (2%);
 *    the lower of the closest pair is reported, flagged noisy when even that
 *    pair differs by more.
 *  - All of it runs in a forked child, pinned to the CPU it starts on: a block
 *    that faults where nothing can be mapped (address 0, a non-canonical
 *    address, a protection fault on a mapped page), divides by zero, executes
 *    an illegal instruction or maps too many pages ends the child, which
 *    first writes the reason into the result pipe; the parent enforces a
 *    timeout (SIGKILL) and reads one fixed-size record, so a wild block can
 *    never hurt the parent.
 *  - The child is confined before the first run (sandbox.c: a seccomp filter
 *    allowing only the result pipe's write, the on-demand page mapping,
 *    rt_sigreturn and exit), and keeps the host stack pointer in the GS base,
 *    not in the data page a block can reach from RIP: a crafted block that
 *    redirected the harness's return ran host code on 21294b6 (issue 12
 *    item 1).  Now it can only fault or be measured; the worst left to it is
 *    a false figure for itself, written into its own pipe.
 *
 * Limits:
 *  - Blocks with control flow, privileged or I/O instructions, REP string
 *    instructions, segment register loads, RD/WR FS/GS base, GS-relative
 *    operands, or writes through FS or RIP-relative operands are refused up
 *    front (es_native_check_block) -
 *    they would leave the block, trap, run unbounded (RCX = R) or scribble
 *    over the child's thread data or the harness.
 *  - All virtual pages alias one physical page, as in BHive: cache misses and
 *    TLB effects beyond a few pages are not what real code would see, and
 *    loads/stores to different addresses may alias (4K aliasing) where real
 *    code's would not.  Loaded values are the pattern R: as doubles that is a
 *    denormal, which may cost an assist in FP code.
 *  - Registers changed by the block drift across iterations (add rax, rbx
 *    doubles and overflows); a block whose addresses then leave the region
 *    ends in an error, like BHive's.
 *  - The ADD chain assumes the core clock is steady over one measurement;
 *    on a shared, loaded machine frequency changes and other tenants scatter
 *    results by 5-10%: measure twice and keep what agrees (the noisy flag).
 *  - Host-only: the code runs natively; on non-x86-64 builds every entry point
 *    reports "unsupported".
 */
#include "measure.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decoder.h"
#include "sandbox.h"

void es_native_default_opts(es_native_opts *o)
{
    o->reps = 25;
    o->unroll = 50;
    o->iters1 = 100;
    o->iters2 = 200;
    o->noisy_pct = 2.0;
    o->timeout_s = 10.0;
    o->tries = 4;
}

static void set_err(char *err, size_t errlen, const char *msg)
{
    if (err && errlen)
        snprintf(err, errlen, "%s", msg);
}

static int hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

int es_native_parse_hex(const char *s, uint8_t *out, size_t cap, size_t *len, char *err,
                        size_t errlen)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n' || s[n - 1] == '\r'))
        n--;
    if (n == 0) {
        set_err(err, errlen, "empty block");
        return -1;
    }
    if (n % 2) {
        set_err(err, errlen, "odd number of hex digits");
        return -1;
    }
    if (n / 2 > cap) {
        set_err(err, errlen, "block too long");
        return -1;
    }
    for (size_t i = 0; i < n; i += 2) {
        int hi = hexval((unsigned char)s[i]), lo = hexval((unsigned char)s[i + 1]);
        if (hi < 0 || lo < 0) {
            set_err(err, errlen, "not a hex digit");
            return -1;
        }
        out[i / 2] = (uint8_t)(hi << 4 | lo);
    }
    *len = n / 2;
    return 0;
}

static bool name_in(const char *name, const char *const *list)
{
    for (; *list; list++)
        if (!strcmp(name, *list))
            return true;
    return false;
}

/* Leave the straight line (or trap into the kernel); relative branches are
 * caught by their ES_OPK_REL operand. */
static const char *const control_flow[] = {
    "jmp", "call", "ret", "iret", "iretd", "iretq", "syscall", "sysenter", "sysexit",
    "sysret", "int", "int1", "int3", "into", "ud0", "ud1", "ud2", "xbegin", "xend",
    "xabort", "loop", "loope", "loopne", "jrcxz", "jecxz", "jcxz", NULL};

/* #GP/#UD at CPL 3 here, or able to stall, or changing the child's
 * FS/GS base (its thread pointer). */
static const char *const privileged[] = {
    "hlt", "cli", "sti", "clts", "lgdt", "lidt", "lldt", "ltr", "lmsw", "sgdt", "sidt",
    "sldt", "str", "smsw", "invd", "wbinvd", "wbnoinvd", "invlpg", "invlpga", "invlpgb",
    "tlbsync", "invpcid", "rdmsr", "wrmsr", "rdpmc", "swapgs", "in", "out", "insb",
    "insw", "insd", "outsb", "outsw", "outsd", "vmcall", "vmmcall", "vmlaunch",
    "vmresume", "vmrun", "vmload", "vmsave", "vmxon", "vmxoff", "vmptrld", "vmptrst",
    "vmread", "vmwrite", "vmclear", "invept", "invvpid", "stgi", "clgi", "skinit",
    "monitor", "mwait", "monitorx", "mwaitx", "umonitor", "umwait", "tpause", "xsetbv",
    "xsaves", "xsaves64", "xrstors", "xrstors64", "wrfsbase", "wrgsbase", "lds", "les",
    "lfs", "lgs", "lss", "rsm", "pconfig", "encls", "enclu", "enclv",
    /* the harness keeps the host stack pointer in the GS base */
    "rdgsbase", "rdfsbase", NULL};

static const char *const string_ops[] = {
    "movsb", "movsw", "movsd", "movsq", "stosb", "stosw", "stosd", "stosq", "lodsb",
    "lodsw", "lodsd", "lodsq", "scasb", "scasw", "scasd", "scasq", "cmpsb", "cmpsw",
    "cmpsd", "cmpsq", NULL};

int es_native_check_block(const uint8_t *code, size_t len, char *err, size_t errlen)
{
    char msg[160];
    if (len == 0) {
        set_err(err, errlen, "empty block");
        return -1;
    }
    for (size_t off = 0; off < len;) {
        es_insn in;
        int st = es_decode(code + off, len - off, ES_MODE_64, 0x10000 + off, &in);
        if (st != ES_DECODE_OK) {
            snprintf(msg, sizeof msg, "%s at byte %zu",
                     st == ES_DECODE_NEED_MORE ? "truncated instruction" : "invalid instruction",
                     off);
            set_err(err, errlen, msg);
            return -1;
        }
        /* the decoder folds RIP-relative operands into absolute addresses:
         * decoding again at another address shows which ones moved */
        es_insn moved;
        if (es_decode(code + off, len - off, ES_MODE_64, 0x7770000 + off, &moved) != ES_DECODE_OK)
            moved = in;
        const char *name = es_op_name(in.op);
        const char *why = NULL;
        if (name_in(name, control_flow))
            why = "control flow";
        else if (name_in(name, privileged))
            why = "privileged, I/O or thread-pointer instruction";
        else if ((in.pfx & (ES_PFX_REP | ES_PFX_REPNE)) && in.opmap == 0 &&
                 name_in(name, string_ops))
            why = "REP string instruction (RCX points into memory: unbounded)";
        for (unsigned i = 0; !why && i < in.nops; i++) {
            const es_operand *o = &in.o[i];
            if (o->kind == ES_OPK_REL)
                why = "control flow";
            else if (o->kind == ES_OPK_CR || o->kind == ES_OPK_DR)
                why = "privileged (control or debug register)";
            else if (o->kind == ES_OPK_SEG && o->write)
                why = "segment register load";
            else if (o->kind == ES_OPK_MEM && o->seg == ES_SEG_GS)
                why = "GS-relative access (the harness keeps the host stack there)";
            else if (o->kind == ES_OPK_MEM && o->write && o->seg == ES_SEG_FS)
                why = "write through FS (the host's thread data)";
            else if (o->kind == ES_OPK_MEM && o->write &&
                     (o->base == ES_REG_RIP || moved.o[i].disp != o->disp))
                why = "RIP-relative write (would hit the harness)";
        }
        if (why) {
            snprintf(msg, sizeof msg, "%s: %s at byte %zu", why, name, off);
            set_err(err, errlen, msg);
            return -1;
        }
        off += in.len;
    }
    return 0;
}

#if defined(__x86_64__)

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

#define REG_INIT 0x12345600ull /* every GPR but RSP (BHive's value): low, so 9*R
                                 * stays canonical and clear of ASan's shadow */
#define PAGE 4096ul
#define MAX_PAGES 2048u          /* on-demand pages before giving up */
#define STACK_OFFSET 0x40000000ull /* RSP = REG_INIT + this */
#define CAL_ADDS 16u             /* dependent adds per calibration block */

/* The record a child writes into the pipe: fixed size, below PIPE_BUF, one
 * write, so the parent reads all of it or nothing. */
typedef struct child_record {
    int status; /* 0 ok */
    double cycles[2];
    double tpc[2];
    char msg[160];
} child_record;

/* State of the child's fault handler.  A signal handler has no argument to
 * carry context, so this one static is the exception to "no globals"; it is
 * only ever used inside a forked measuring child. */
static struct {
    int pipe_fd;
    int memfd;
    unsigned pages;
    volatile sig_atomic_t faulted;
} g_child;

/* Data page right after the harness code (offsets used by the generated code). */
enum { D_SAVED_RSP = 0, D_SCRATCH_RSP = 8, D_MXCSR = 16, D_COUNTER = 24 };

typedef struct harness {
    uint8_t *area;
    size_t area_len;
    uint8_t *data; /* the data page */
    void (*run)(void);
    bool gsbase; /* run() leaves its stack pointer in the GS base */
} harness;

/* --- async-signal-safe reporting from the child ----------------------------- */

static size_t put_str(char *b, size_t at, size_t cap, const char *s)
{
    while (*s && at + 1 < cap)
        b[at++] = *s++;
    b[at] = 0;
    return at;
}

static size_t put_hex(char *b, size_t at, size_t cap, uint64_t v)
{
    char t[19] = "0x";
    int n = 2;
    bool started = false;
    for (int sh = 60; sh >= 0; sh -= 4) {
        unsigned d = (v >> sh) & 15;
        if (d || started || sh == 0) {
            t[n++] = "0123456789abcdef"[d];
            started = true;
        }
    }
    t[n] = 0;
    return put_str(b, at, cap, t);
}

static void child_die(const char *what, bool with_addr, uint64_t addr)
{
    child_record r;
    memset(&r, 0, sizeof r);
    r.status = 1;
    size_t at = put_str(r.msg, 0, sizeof r.msg, what);
    if (with_addr)
        put_hex(r.msg, at, sizeof r.msg, addr);
    es_native_raw_write(g_child.pipe_fd, &r, sizeof r);
    es_native_raw_exit(3);
}

static void child_fault(int sig, siginfo_t *si, void *uctx)
{
    (void)uctx;
    uint64_t addr = (uint64_t)(uintptr_t)si->si_addr;
    if (sig == SIGSEGV && si->si_code == SEGV_MAPERR) {
        if (g_child.pages >= MAX_PAGES)
            child_die("too many pages mapped on demand (addresses drift), last at ", true,
                      addr);
        uint64_t page = addr & ~(uint64_t)(PAGE - 1);
        /* the one mapping the sandbox allows (a kernel older than 4.17
         * would take FIXED_NOREPLACE as a hint and place it elsewhere:
         * then it is not our page, and the child ends) */
        void *p = es_native_raw_mmap(page, PAGE, PROT_READ | PROT_WRITE,
                                     MAP_SHARED | MAP_FIXED_NOREPLACE, g_child.memfd);
        if (p == (void *)(uintptr_t)page) {
            g_child.pages++;
            g_child.faulted = 1;
            return; /* the instruction restarts; the run is discarded */
        }
        child_die("page fault at an address that cannot be mapped: ", true, addr);
    }
    switch (sig) {
    case SIGSEGV:
        if (si->si_code == SEGV_ACCERR)
            child_die("protection fault on a mapped page at ", true, addr);
        child_die("general protection fault (non-canonical address, misaligned "
                  "operand or privileged instruction)", false, 0);
        break;
    case SIGBUS:
        child_die("bus error at ", true, addr);
        break;
    case SIGILL:
        child_die("illegal instruction on this host", false, 0);
        break;
    case SIGFPE:
        child_die("arithmetic exception (divide error)", false, 0);
        break;
    case SIGTRAP:
        child_die("debug trap", false, 0);
        break;
    default:
        child_die("unexpected signal", false, 0);
    }
}

/* --- the harness ------------------------------------------------------------- */

typedef struct emitter {
    uint8_t *p;
    size_t n, cap;
} emitter;

static void emit(emitter *e, const void *b, size_t n)
{
    if (e->n + n <= e->cap)
        memcpy(e->p + e->n, b, n);
    e->n += n;
}

static void emit_movabs_rax(emitter *e, uint64_t v)
{
    uint8_t b[10] = {0x48, 0xb8};
    memcpy(b + 2, &v, 8);
    emit(e, b, 10);
}

/* What the host offers the harness: AVX (VZEROALL/VZEROUPPER) and user-mode
 * FSGSBASE (Linux 5.9+, AT_HWCAP2 bit 1). */
enum { HF_AVX = 1, HF_GSBASE = 2 };

/* Lays out: prologue, aligned loop top, block x unroll, dec/jnz, epilogue.
 * With cap 0 it only counts bytes.  The host stack pointer is kept in the
 * GS base where the host has FSGSBASE: the block can compute the data page's
 * address from RIP and store there, and a stack pointer kept in it was how
 * a crafted block took control of the child (issue 12 item 1); the block
 * check refuses GS-relative operands and RDGSBASE/WRGSBASE, so nothing in
 * the block reaches the GS base.  Without FSGSBASE it is kept in the data
 * page, and only the sandbox stands between such a block and the host. */
static size_t gen_harness(uint8_t *buf, size_t cap, uint64_t code_addr, uint64_t data_addr,
                          const uint8_t *block, size_t len, unsigned unroll, unsigned hf)
{
    emitter e = {buf, 0, cap};
    static const uint8_t push_callee[] = {0x53, 0x55, 0x41, 0x54, 0x41, 0x55, 0x41, 0x56,
                                          0x41, 0x57};
    emit(&e, push_callee, sizeof push_callee);
    emit_movabs_rax(&e, data_addr);
    if (hf & HF_GSBASE)
        emit(&e, "\xf3\x48\x0f\xae\xdc", 5); /* wrgsbase rsp */
    else
        emit(&e, "\x48\x89\x20", 3); /* mov [rax], rsp */
    static const uint8_t enter[] = {
        0x48, 0x8b, 0x60, 0x08, /* mov rsp, [rax+8]: the scratch stack */
        0xdb, 0xe3,             /* fninit */
        0x0f, 0xae, 0x50, 0x10, /* ldmxcsr [rax+16] */
        0xfc,                   /* cld */
    };
    emit(&e, enter, sizeof enter);
    if (hf & HF_AVX) {
        static const uint8_t vzeroall[] = {0xc5, 0xfc, 0x77};
        emit(&e, vzeroall, 3);
    }
    emit_movabs_rax(&e, REG_INIT);
    static const uint8_t regs[] = {
        0x48, 0x89, 0xc1, 0x48, 0x89, 0xc2, 0x48, 0x89, 0xc3, 0x48, 0x89, 0xc5, /* rcx rdx rbx rbp */
        0x48, 0x89, 0xc6, 0x48, 0x89, 0xc7,                                     /* rsi rdi */
        0x49, 0x89, 0xc0, 0x49, 0x89, 0xc1, 0x49, 0x89, 0xc2, 0x49, 0x89, 0xc3, /* r8-r11 */
        0x49, 0x89, 0xc4, 0x49, 0x89, 0xc5, 0x49, 0x89, 0xc6, 0x49, 0x89, 0xc7, /* r12-r15 */
    };
    emit(&e, regs, sizeof regs);
    while ((code_addr + e.n) % 64)
        emit(&e, "\x90", 1);
    size_t top = e.n;
    for (unsigned i = 0; i < unroll; i++)
        emit(&e, block, len);
    /* dec qword [rip + counter] */
    int32_t disp = (int32_t)((int64_t)(data_addr + D_COUNTER) - (int64_t)(code_addr + e.n + 7));
    uint8_t dec[7] = {0x48, 0xff, 0x0d};
    memcpy(dec + 3, &disp, 4);
    emit(&e, dec, 7);
    int32_t rel = (int32_t)((int64_t)top - (int64_t)(e.n + 6));
    uint8_t jnz[6] = {0x0f, 0x85};
    memcpy(jnz + 2, &rel, 4);
    emit(&e, jnz, 6);
    emit_movabs_rax(&e, data_addr);
    if (hf & HF_GSBASE)
        emit(&e, "\xf3\x48\x0f\xae\xcc", 5); /* rdgsbase rsp */
    else
        emit(&e, "\x48\x8b\x20", 3); /* mov rsp, [rax] */
    static const uint8_t leave_[] = {
        0x0f, 0xae, 0x50, 0x10, /* ldmxcsr [rax+16] */
        0xdb, 0xe3,             /* fninit */
        0xfc,                   /* cld */
    };
    emit(&e, leave_, sizeof leave_);
    if (hf & HF_AVX) {
        static const uint8_t vzeroupper[] = {0xc5, 0xf8, 0x77};
        emit(&e, vzeroupper, 3);
    }
    static const uint8_t pop_callee[] = {0x41, 0x5f, 0x41, 0x5e, 0x41, 0x5d, 0x41, 0x5c,
                                         0x5d, 0x5b, 0xc3};
    emit(&e, pop_callee, sizeof pop_callee);
    return e.n;
}

static int harness_build(harness *h, const uint8_t *block, size_t len, unsigned unroll,
                         uint64_t scratch_rsp, unsigned hf)
{
    size_t need = gen_harness(NULL, 0, 0, 0, block, len, unroll, hf) + 128;
    size_t code_len = (need + PAGE - 1) & ~(PAGE - 1);
    h->area_len = code_len + PAGE;
    h->area = mmap(NULL, h->area_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                   -1, 0);
    if (h->area == MAP_FAILED)
        return -1;
    h->data = h->area + code_len;
    uint64_t saved = 0;
    uint32_t mxcsr = 0x1f80;
    memcpy(h->data + D_SAVED_RSP, &saved, 8);
    memcpy(h->data + D_SCRATCH_RSP, &scratch_rsp, 8);
    memcpy(h->data + D_MXCSR, &mxcsr, 4);
    gen_harness(h->area, code_len, (uint64_t)(uintptr_t)h->area, (uint64_t)(uintptr_t)h->data,
                block, len, unroll, hf);
    if (mprotect(h->area, code_len, PROT_READ | PROT_EXEC))
        return -1;
    h->run = (void (*)(void))(uintptr_t)h->area;
    h->gsbase = (hf & HF_GSBASE) != 0;
    return 0;
}

static inline uint64_t tsc_begin(void)
{
    uint32_t lo, hi;
    __asm__ volatile("lfence\n\trdtsc\n\tlfence" : "=a"(lo), "=d"(hi)::"memory");
    return (uint64_t)hi << 32 | lo;
}

static inline uint64_t tsc_end(void)
{
    uint32_t lo, hi;
    __asm__ volatile("rdtscp\n\tlfence" : "=a"(lo), "=d"(hi)::"rcx", "memory");
    return (uint64_t)hi << 32 | lo;
}

static inline uint64_t read_gsbase(void)
{
    uint64_t v;
    __asm__ volatile(".byte 0xf3, 0x48, 0x0f, 0xae, 0xc8" : "=a"(v)); /* rdgsbase rax */
    return v;
}

static inline void write_gsbase(uint64_t v)
{
    __asm__ volatile(".byte 0xf3, 0x48, 0x0f, 0xae, 0xd8" ::"a"(v) : "memory"); /* wrgsbase rax */
}

/* One clean (fault-free) run of `iters` loop iterations, in TSC ticks. */
static uint64_t timed_run(harness *h, unsigned iters)
{
    for (unsigned attempt = 0;; attempt++) {
        uint64_t n = iters;
        memcpy(h->data + D_COUNTER, &n, 8);
        g_child.faulted = 0;
        uint64_t gs = h->gsbase ? read_gsbase() : 0;
        uint64_t t0 = tsc_begin();
        h->run();
        uint64_t t1 = tsc_end();
        if (h->gsbase)
            write_gsbase(gs); /* Linux user code has GS base 0; keep what it was */
        if (!g_child.faulted)
            return t1 - t0;
        if (attempt > MAX_PAGES + 16)
            child_die("runs keep faulting", false, 0);
    }
}

/* TSC ticks per copy of the calibration chain (cal_out) and of the block
 * (blk_out, when b is not NULL): (min t2 - min t1) / (copies between).  The
 * two harnesses' runs are interleaved so that both minima come from the same
 * stretch of time, at the same core clock. */
static void ticks_per_copy(harness *c, harness *b, const es_native_opts *o, double *cal_out,
                           double *blk_out)
{
    harness *hs[2] = {c, b};
    uint64_t best[2][2] = {{UINT64_MAX, UINT64_MAX}, {UINT64_MAX, UINT64_MAX}};
    for (int k = 0; k < 2; k++) {
        if (!hs[k])
            continue;
        timed_run(hs[k], o->iters1); /* warm-up: maps the working set, fills caches */
        timed_run(hs[k], o->iters2);
    }
    for (unsigned r = 0; r < o->reps; r++) {
        for (int k = 0; k < 2; k++) {
            if (!hs[k])
                continue;
            uint64_t t1 = timed_run(hs[k], o->iters1), t2 = timed_run(hs[k], o->iters2);
            if (t1 < best[k][0])
                best[k][0] = t1;
            if (t2 < best[k][1])
                best[k][1] = t2;
        }
    }
    double copies = (double)(o->iters2 - o->iters1) * (double)o->unroll;
    *cal_out = ((double)best[0][1] - (double)best[0][0]) / copies;
    if (b)
        *blk_out = ((double)best[1][1] - (double)best[1][0]) / copies;
}

static void pin_to_current_cpu(void)
{
    int cpu = sched_getcpu();
    if (cpu < 0)
        return;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    sched_setaffinity(0, sizeof set, &set);
}

/* The child: never returns. */
static void child_main(const uint8_t *block, size_t len, const es_native_opts *o,
                       bool calibrate_only, int fd)
{
    g_child.pipe_fd = fd;
    g_child.pages = 0;
    g_child.memfd = memfd_create("entrysim-native", 0);
    if (g_child.memfd < 0 || ftruncate(g_child.memfd, PAGE))
        child_die("memfd_create failed", false, 0);
    uint64_t *fill = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, g_child.memfd, 0);
    if (fill == MAP_FAILED)
        child_die("mmap of the shared page failed", false, 0);
    for (size_t i = 0; i < PAGE / 8; i++)
        fill[i] = REG_INIT;

    stack_t ss = {.ss_size = 64 * 1024, .ss_flags = 0};
    ss.ss_sp = mmap(NULL, ss.ss_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (ss.ss_sp == MAP_FAILED || sigaltstack(&ss, NULL))
        child_die("sigaltstack failed", false, 0);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = child_fault;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    int sigs[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        sigaction(sigs[i], &sa, NULL);

    /* RSP gets its own point in the region, 1 GiB above the others: pushes,
     * pops and RSP-relative stores land on the one shared page like every
     * other access (as in the reference data: stack stores and loads through
     * other registers may alias in the physical page). */
    uint64_t scratch_rsp = REG_INIT + STACK_OFFSET;

    unsigned hf = (__builtin_cpu_supports("avx") ? HF_AVX : 0) |
                  (getauxval(AT_HWCAP2) & 2 ? HF_GSBASE : 0);
    /* add rax, rax, not add rax, 1: Golden Cove's renamer folds chains of
     * add-immediate (they run at several per cycle there: a chain of 32
     * measured 16 per ns on this VM's Emerald Rapids against 2.9 for
     * add rax, rax), which made every Intel figure 5-6 times too high */
    uint8_t cal[CAL_ADDS * 3];
    for (unsigned i = 0; i < CAL_ADDS; i++)
        memcpy(cal + 3 * i, "\x48\x01\xc0", 3); /* add rax, rax */
    harness hc, hb;
    if (harness_build(&hc, cal, sizeof cal, o->unroll, scratch_rsp, hf))
        child_die("cannot map the calibration harness", false, 0);
    if (!calibrate_only &&
        harness_build(&hb, block, len, o->unroll, scratch_rsp, hf))
        child_die("cannot map the block harness", false, 0);
    pin_to_current_cpu();
    /* from here on only raw system calls, and only those the filter allows */
    if (es_native_sandbox_enter(fd, g_child.memfd))
        child_die("cannot confine the measuring child (no seccomp filter in this kernel)",
                  false, 0);

    child_record r;
    memset(&r, 0, sizeof r);
    /* Independent measurements until two agree within noisy_pct (at least
     * two, at most `tries`); the closest pair is reported. */
    enum { MAX_TRIES = 16 };
    double cyc[MAX_TRIES], tpc[MAX_TRIES];
    unsigned tries = o->tries < 2 ? 2 : o->tries > MAX_TRIES ? MAX_TRIES : o->tries;
    int bi = 0, bj = 1;
    double bestd = INFINITY;
    for (unsigned k = 0; k < tries; k++) {
        double cal = 0, blk = 0;
        ticks_per_copy(&hc, calibrate_only ? NULL : &hb, o, &cal, &blk);
        tpc[k] = cal / CAL_ADDS;
        cyc[k] = calibrate_only ? tpc[k] : blk / tpc[k];
        for (unsigned i = 0; i < k; i++) {
            double lo = fmin(cyc[i], cyc[k]), d = fabs(cyc[i] - cyc[k]) / (lo > 0 ? lo : 1);
            if (d < bestd) {
                bestd = d;
                bi = (int)i;
                bj = (int)k;
            }
        }
        if (k >= 1 && bestd * 100.0 <= o->noisy_pct)
            break;
    }
    r.tpc[0] = tpc[bi];
    r.tpc[1] = tpc[bj];
    if (!calibrate_only) {
        r.cycles[0] = cyc[bi];
        r.cycles[1] = cyc[bj];
    }
    es_native_raw_write(fd, &r, sizeof r);
    es_native_raw_exit(0);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Forks the child and collects its record; the parent is never at risk. */
static int run_child(const uint8_t *block, size_t len, const es_native_opts *o,
                     bool calibrate_only, child_record *r)
{
    memset(r, 0, sizeof *r);
    int p[2];
    if (pipe(p)) {
        r->status = 1;
        snprintf(r->msg, sizeof r->msg, "pipe: %s", strerror(errno));
        return -1;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(p[0]);
        close(p[1]);
        r->status = 1;
        snprintf(r->msg, sizeof r->msg, "fork: %s", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        close(p[0]);
        child_main(block, len, o, calibrate_only, p[1]);
        _exit(4);
    }
    close(p[1]);
    double deadline = now_s() + o->timeout_s;
    size_t got = 0;
    bool timed_out = false;
    while (got < sizeof *r) {
        double left = deadline - now_s();
        if (left <= 0) {
            timed_out = true;
            break;
        }
        struct pollfd pf = {.fd = p[0], .events = POLLIN};
        int pr = poll(&pf, 1, (int)(left * 1000) + 1);
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr <= 0)
            continue; /* re-checks the deadline */
        ssize_t n = read(p[0], (char *)r + got, sizeof *r - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    close(p[0]);
    if (timed_out)
        kill(pid, SIGKILL);
    int ws = 0;
    while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
        ;
    if (timed_out) {
        r->status = 1;
        snprintf(r->msg, sizeof r->msg, "timeout after %.0f s (the block does not finish)",
                 o->timeout_s);
        return -1;
    }
    if (got < sizeof *r) {
        r->status = 1;
        if (WIFSIGNALED(ws) && WTERMSIG(ws) == SIGSYS)
            snprintf(r->msg, sizeof r->msg,
                     "the block made a system call: the measuring child's sandbox killed it");
        else if (WIFSIGNALED(ws))
            snprintf(r->msg, sizeof r->msg, "measuring child killed by signal %d",
                     WTERMSIG(ws));
        else
            snprintf(r->msg, sizeof r->msg, "measuring child exited (%d) without a result",
                     WIFEXITED(ws) ? WEXITSTATUS(ws) : -1);
        return -1;
    }
    r->msg[sizeof r->msg - 1] = 0;
    return r->status ? -1 : 0;
}

bool es_native_supported(void)
{
    return true;
}

int es_native_calibrate(const es_native_opts *o, double *ticks_per_cycle, char *err,
                        size_t errlen)
{
    child_record r;
    if (run_child(NULL, 0, o, true, &r)) {
        set_err(err, errlen, r.msg);
        return -1;
    }
    *ticks_per_cycle = r.tpc[0] < r.tpc[1] ? r.tpc[0] : r.tpc[1];
    if (!(*ticks_per_cycle > 0)) {
        set_err(err, errlen, "calibration gave no positive ticks per cycle (noise)");
        return -1;
    }
    return 0;
}

int es_native_measure(const uint8_t *code, size_t len, const es_native_opts *o,
                      es_native_result *out)
{
    memset(out, 0, sizeof *out);
    out->status = 1;
    if (es_native_check_block(code, len, out->error, sizeof out->error))
        return out->status;
    child_record r;
    if (run_child(code, len, o, false, &r)) {
        snprintf(out->error, sizeof out->error, "%s", r.msg);
        return out->status;
    }
    out->cycles_each[0] = r.cycles[0];
    out->cycles_each[1] = r.cycles[1];
    out->ticks_per_cycle = r.tpc[0];
    double lo = fmin(r.cycles[0], r.cycles[1]), hi = fmax(r.cycles[0], r.cycles[1]);
    if (!(r.tpc[0] > 0) || !(r.tpc[1] > 0) || !(lo > 0)) {
        snprintf(out->error, sizeof out->error,
                 "no positive difference between the run lengths (noise)");
        return out->status;
    }
    out->cycles = lo;
    out->noisy = (hi - lo) > lo * o->noisy_pct / 100.0;
    out->status = 0;
    return 0;
}

#else /* not x86-64 */

bool es_native_supported(void)
{
    return false;
}

int es_native_calibrate(const es_native_opts *o, double *ticks_per_cycle, char *err,
                        size_t errlen)
{
    (void)o;
    *ticks_per_cycle = 0;
    set_err(err, errlen, "unsupported: measure-native needs an x86-64 host");
    return -1;
}

int es_native_measure(const uint8_t *code, size_t len, const es_native_opts *o,
                      es_native_result *out)
{
    (void)code, (void)len, (void)o;
    memset(out, 0, sizeof *out);
    out->status = 1;
    set_err(out->error, sizeof out->error, "unsupported: measure-native needs an x86-64 host");
    return 1;
}

#endif
