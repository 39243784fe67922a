/* exposure.c - `entrysim exposure` and `entrysim explain` (exposure.h).
 *
 * The generated guest is a one-page static ELF built here: it sets a
 * distinct marker in every register the entry path lets the user set, the
 * syscall number in (E)AX, and enters the kernel the way the entry path
 * does in real programs:
 *   syscall64   syscall
 *   x32         syscall, nr | __X32_SYSCALL_BIT
 *   int80       int 0x80                                 (i386 process)
 *   sysenter32  push ecx; push edx; push ebp; mov ebp, esp; sysenter
 *               (the vDSO's __kernel_vsyscall on Intel: arg 6 is on the stack)
 *   syscall32   push ecx; push edx; push ebp; mov ebp, ecx; syscall
 *               (the vDSO's __kernel_vsyscall on AMD: SYSCALL clobbers ECX,
 *               so arg 2 rides in EBP and arg 6 on the stack)
 *   vsyscall    call [ptr] with ptr = 0xffffffffff600000 + 0x400 * n
 * The kernel boots, IRETQs to the program, the program runs to its entry
 * instruction; there every user register is labelled with itself and the
 * taint observer is attached; then the run goes on, one instruction at a
 * time, until the last probe.
 */
#include "exposure.h"

#include <stdlib.h>
#include <string.h>

#include "decoder.h"
#include "host.h"
#include "kernel.h"
#include "loader.h"
#include "mem.h"
#include "mitigations.h"
#include "timing.h"

/* ---- the tables (generated from tables/) ---- */

typedef struct row64 {
    int nr;
    const char *abi;
    const char *name;
} row64;
typedef struct row32 {
    int nr;
    const char *name;
} row32;
typedef struct rowargs {
    int nr, nargs;
} rowargs;

static const row64 rows64[] = {
#define ES_SYSCALL_64(nr, abi, name, entry) {nr, #abi, #name},
#include "es_syscall_64.h"
#undef ES_SYSCALL_64
};
static const row32 rows32[] = {
#define ES_SYSCALL_32(nr, name, entry, compat) {nr, #name},
#include "es_syscall_32.h"
#undef ES_SYSCALL_32
};
static const rowargs args64[] = {
#define ES_SYSCALL_ARGS_64(nr, n, p) {nr, n},
#include "es_syscall_args.h"
#undef ES_SYSCALL_ARGS_64
};
static const rowargs args32[] = {
#define ES_SYSCALL_ARGS_32(nr, n, p) {nr, n},
#include "es_syscall_args.h"
#undef ES_SYSCALL_ARGS_32
};

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static int arity_of(const rowargs *a, size_t n, int nr)
{
    for (size_t i = 0; i < n; i++)
        if (a[i].nr == nr)
            return a[i].nargs;
    return 0;
}

static bool is32(int entry)
{
    return entry == ES_ENTRY_INT80 || entry == ES_ENTRY_SYSENTER32 || entry == ES_ENTRY_SYSCALL32;
}

/* Rows an entry path can call: the i386 table for the 32-bit entries, the
 * common and 64 rows for syscall64, common and x32 rows for x32, and the
 * three vsyscalls. */
static bool row64_usable(const row64 *r, int entry)
{
    if (entry == ES_ENTRY_VSYSCALL)
        return !strcmp(r->name, "gettimeofday") || !strcmp(r->name, "time") ||
               !strcmp(r->name, "getcpu");
    if (!strcmp(r->abi, "common"))
        return true;
    return !strcmp(r->abi, entry == ES_ENTRY_X32 ? "x32" : "64");
}

static const char *const entry_names[ES_ENTRY_COUNT] = {"syscall64", "int80", "sysenter32",
                                                        "syscall32", "x32", "vsyscall"};

const char *es_entry_name(int entry)
{
    return entry >= 0 && entry < ES_ENTRY_COUNT ? entry_names[entry] : "?";
}

int es_entry_parse(const char *name)
{
    for (int i = 0; i < ES_ENTRY_COUNT; i++)
        if (!strcmp(name, entry_names[i]))
            return i;
    return -1;
}

bool es_syscall_name(int entry, int nr, char *out, size_t n)
{
    if (entry < 0 || entry >= ES_ENTRY_COUNT)
        return false;
    if (is32(entry)) {
        for (size_t i = 0; i < NELEM(rows32); i++)
            if (rows32[i].nr == nr) {
                snprintf(out, n, "%s", rows32[i].name);
                return true;
            }
        return false;
    }
    for (size_t i = 0; i < NELEM(rows64); i++)
        if (rows64[i].nr == nr && row64_usable(&rows64[i], entry)) {
            snprintf(out, n, "%s", rows64[i].name);
            return true;
        }
    return false;
}

int es_syscall_nr(int entry, const char *name)
{
    int nr = -1;
    if (entry < 0 || entry >= ES_ENTRY_COUNT)
        return -1;
    if (is32(entry)) {
        for (size_t i = 0; i < NELEM(rows32); i++)
            if (!strcmp(rows32[i].name, name))
                nr = rows32[i].nr;
    } else {
        for (size_t i = 0; i < NELEM(rows64); i++)
            if (!strcmp(rows64[i].name, name) && row64_usable(&rows64[i], entry))
                nr = rows64[i].nr;
    }
    return nr;
}

/* ---- the generated guest ---- */

#define GVADDR 0x400000u

static void put(uint8_t *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* Wraps code in a static ELF with one R+X PT_LOAD: ELF64 for x86-64,
 * ELF32 (EM_386 or, for x32, EM_X86_64) otherwise. */
static size_t make_elf(uint8_t *buf, int abi, const uint8_t *code, size_t n)
{
    bool c64 = abi == ES_ABI_X64;
    size_t hdrs = c64 ? 64 + 56 : 52 + 32;
    size_t size = hdrs + n;
    memset(buf, 0, hdrs);
    memcpy(buf, c64 ? "\177ELF\2\1\1" : "\177ELF\1\1\1", 7);
    put(buf + 16, 2, 2);                            /* ET_EXEC */
    put(buf + 18, abi == ES_ABI_I386 ? 3 : 62, 2);  /* EM_386 / EM_X86_64 */
    put(buf + 20, 1, 4);
    if (c64) {
        put(buf + 24, GVADDR + hdrs, 8);
        put(buf + 32, 64, 8);
        put(buf + 52, 64, 2);
        put(buf + 54, 56, 2);
        put(buf + 56, 1, 2);
        uint8_t *ph = buf + 64;
        put(ph + 0, 1, 4);
        put(ph + 4, 5, 4);
        put(ph + 16, GVADDR, 8);
        put(ph + 24, GVADDR, 8);
        put(ph + 32, size, 8);
        put(ph + 40, size, 8);
        put(ph + 48, 0x1000, 8);
    } else {
        put(buf + 24, GVADDR + hdrs, 4);
        put(buf + 28, 52, 4);
        put(buf + 40, 52, 2);
        put(buf + 42, 32, 2);
        put(buf + 44, 1, 2);
        uint8_t *ph = buf + 52;
        put(ph + 0, 1, 4);
        put(ph + 8, GVADDR, 4);
        put(ph + 12, GVADDR, 4);
        put(ph + 16, size, 4);
        put(ph + 20, size, 4);
        put(ph + 24, 5, 4);
        put(ph + 28, 0x1000, 4);
    }
    memcpy(buf + hdrs, code, n);
    return size;
}

/* The marker loaded into GPR i: recognisable in a register dump. */
static uint64_t marker(int i, bool wide)
{
    return wide ? 0x5e5e000000000000ull | (uint64_t)(i + 1) * 0x0000001100110011ull
                : 0x5e000000u | (uint32_t)(i + 1) * 0x00001111u;
}

/* Builds the program; *label_off = offset of the instruction at which the
 * user registers are labelled (the kernel entry instruction). */
static size_t gen_code(int entry, int nr, uint8_t *c, size_t *label_off)
{
    size_t k = 0;
    if (!is32(entry)) {
        for (int r = 0; r < 16; r++) {
            if (r == ES_RSP || (r == ES_RAX && entry != ES_ENTRY_VSYSCALL))
                continue;
            c[k++] = (uint8_t)(0x48 | (r >= 8 ? 1 : 0)); /* REX.W (+B) */
            c[k++] = (uint8_t)(0xb8 + (r & 7));          /* mov r64, imm64 */
            put(c + k, marker(r, true), 8);
            k += 8;
        }
        if (entry == ES_ENTRY_VSYSCALL) {
            /* emulate_vsyscall checks the output pointers before the call
             * (write_ok_or_segv): they must be writable user memory, so
             * they point below the stack pointer.  Labels go by register,
             * not by value, so this changes nothing in the analysis. */
            static const uint8_t lea[] = {
                0x48, 0x8d, 0xbc, 0x24, 0x00, 0xff, 0xff, 0xff, /* lea rdi, [rsp-0x100] */
                0x48, 0x8d, 0xb4, 0x24, 0x00, 0xfe, 0xff, 0xff, /* lea rsi, [rsp-0x200] */
            };
            memcpy(c + k, lea, sizeof lea);
            k += sizeof lea;
            *label_off = k;
            c[k++] = 0xff, c[k++] = 0x15; /* call [rip+2] */
            put(c + k, 2, 4);
            k += 4;
            c[k++] = 0xeb, c[k++] = 0xfe; /* jmp $ */
            put(c + k, ES_VSYSCALL_ADDR + 0x400ull * (uint64_t)nr, 8);
            k += 8;
            return k;
        }
        uint32_t n = (uint32_t)nr | (entry == ES_ENTRY_X32 ? (uint32_t)ES_X32_SYSCALL_BIT : 0);
        c[k++] = 0xb8; /* mov eax, nr */
        put(c + k, n, 4);
        k += 4;
        *label_off = k;
        c[k++] = 0x0f, c[k++] = 0x05; /* syscall */
        c[k++] = 0xeb, c[k++] = 0xfe;
        return k;
    }
    for (int r = 1; r < 8; r++) {
        if (r == ES_RSP)
            continue;
        c[k++] = (uint8_t)(0xb8 + r); /* mov r32, imm32 */
        put(c + k, marker(r, false), 4);
        k += 4;
    }
    c[k++] = 0xb8;
    put(c + k, (uint32_t)nr, 4);
    k += 4;
    if (entry == ES_ENTRY_INT80) {
        *label_off = k;
        c[k++] = 0xcd, c[k++] = 0x80;
    } else if (entry == ES_ENTRY_SYSENTER32) {
        c[k++] = 0x51, c[k++] = 0x52, c[k++] = 0x55; /* push ecx; push edx; push ebp */
        c[k++] = 0x89, c[k++] = 0xe5;                 /* mov ebp, esp */
        *label_off = k;
        c[k++] = 0x0f, c[k++] = 0x34; /* sysenter */
    } else {
        /* as the vDSO's __kernel_vsyscall enters on AMD: the same three
         * pushes as for SYSENTER, then arg 2 moves to EBP because SYSCALL
         * overwrites ECX with the return address */
        c[k++] = 0x51, c[k++] = 0x52, c[k++] = 0x55; /* push ecx; push edx; push ebp */
        c[k++] = 0x89, c[k++] = 0xcd;                 /* mov ebp, ecx */
        *label_off = k;
        c[k++] = 0x0f, c[k++] = 0x05; /* syscall */
    }
    c[k++] = 0xeb, c[k++] = 0xfe;
    return k;
}

/* ---- expectations ---- */

static const int cabi[6] = {ES_RDI, ES_RSI, ES_RDX, ES_RCX, ES_R8, ES_R9};

/* The label the i-th syscall argument legitimately carries on this entry. */
static es_label arg_source(int entry, int i)
{
    static const int r64[6] = {ES_RDI, ES_RSI, ES_RDX, ES_R10, ES_R8, ES_R9};
    static const int r80[6] = {ES_RBX, ES_RCX, ES_RDX, ES_RSI, ES_RDI, ES_RBP};
    static const int rse[6] = {ES_RBX, ES_RCX, ES_RDX, ES_RSI, ES_RDI, -1};
    static const int rsc[6] = {ES_RBX, ES_RBP, ES_RDX, ES_RSI, ES_RDI, -1};
    const int *t = entry == ES_ENTRY_INT80        ? r80
                   : entry == ES_ENTRY_SYSENTER32 ? rse
                   : entry == ES_ENTRY_SYSCALL32  ? rsc
                                                  : r64;
    return t[i] < 0 ? ES_TL_MEM : ES_TL_REG(t[i]);
}

static bool starts(const char *s, const char *p)
{
    return !strncmp(s, p, strlen(p));
}

/* pt_regs-style functions take one argument, the kernel's regs pointer:
 * no user value belongs in any register. */
static bool ptregs_style(const char *sym)
{
    return starts(sym, "__x64_") || starts(sym, "__ia32_") || starts(sym, "__x32_") ||
           starts(sym, "sys32_x32_");
}

/* The body behind a table target: __do_sys_X for __x64/__ia32_sys_X,
 * __do_compat_sys_X for the compat stubs, SYSC_X / C_SYSC_X for v4.16's
 * sys_X / compat_sys_X. */
static void body_of(const es_machine *m, const char *target, char *out, size_t n)
{
    static const char *const map[][2] = {
        {"__x64_sys_", "__do_sys_"},         {"__ia32_sys_", "__do_sys_"},
        {"__ia32_compat_sys_", "__do_compat_sys_"}, {"__x32_compat_sys_", "__do_compat_sys_"},
        {"compat_sys_", "C_SYSC_"},          {"compat_SyS_", "C_SYSC_"},
        {"sys_", "SYSC_"},                   {"SyS_", "SYSC_"},
    };
    out[0] = 0;
    if (!strcmp(target, "sys_ni_syscall"))
        return;
    for (size_t i = 0; i < NELEM(map); i++) {
        if (!starts(target, map[i][0]))
            continue;
        const char *base = target + strlen(map[i][0]);
        snprintf(out, n, "%s%s", map[i][1], base);
        if (es_kernel_sym(m, out))
            return;
        /* the other convention's body of the same name */
        const char *alt = map[i][1][0] == '_' ? (strstr(map[i][1], "compat") ? "C_SYSC_" : "SYSC_")
                                              : (map[i][1][0] == 'C' ? "__do_compat_sys_"
                                                                     : "__do_sys_");
        snprintf(out, n, "%s%s", alt, base);
        if (es_kernel_sym(m, out))
            return;
        out[0] = 0;
        return;
    }
}

/* ---- one case ---- */

static int fail(es_exposure *e, const char *msg)
{
    snprintf(e->error, sizeof e->error, "%s", msg);
    return -1;
}

static void record(es_probe *p, const es_taint *t)
{
    p->hit = true;
    p->exposed = 0;
    for (int r = 0; r < 16; r++) {
        p->regs[r] = es_taint_reg(t, r);
        /* the syscall number alone is not exposure: every path carries it
         * (bounds-checked and masked with array_index_nospec) */
        if (p->regs[r] & ~p->allowed[r] & ~ES_TL_NR)
            p->exposed |= (uint16_t)(1u << r);
    }
}

/* The name the convention gives the function at a table slot's address.
 * Under v4.16 sys_X and SyS_X (compat_sys_X and compat_SyS_X) are one
 * address, and es_kernel_addr2sym may return either; the table's own entry
 * names (sys_X, compat_sys_X under v4.16; __x64_sys_X, __ia32_sys_X,
 * __ia32_compat_sys_X, __x32_compat_sys_X under v4.17) are preferred so
 * that every probe of a run is named the same way.  Falls back to
 * es_kernel_addr2sym's name.  Returns false if the address starts no
 * symbol. */
static bool table_entry_name(const es_machine *m, uint64_t addr, char *out, size_t n)
{
    /* entry names first; after them the alias spellings, which are only
     * stripped: v4.16's SyS_, and the seed series' own __compat_sys_ia32_ /
     * __compat_sys_x32_ (renamed in the merged 4.17) */
    static const char *const prefixes[] = {"__x64_sys_", "__ia32_sys_", "__ia32_compat_sys_",
                                           "__x32_compat_sys_", "compat_sys_", "sys_",
                                           "compat_SyS_", "SyS_", "__compat_sys_ia32_",
                                           "__compat_sys_x32_"};
    enum { NENTRY = 6 };
    uint64_t off;
    const char *s = es_kernel_addr2sym(m, addr, &off);
    if (!s || off != 0)
        return false;
    snprintf(out, n, "%s", s);
    const char *base = NULL;
    for (size_t i = 0; i < NELEM(prefixes) && !base; i++)
        if (starts(s, prefixes[i]))
            base = s + strlen(prefixes[i]);
    if (!base)
        return true;
    char b[80];
    snprintf(b, sizeof b, "%s", base);
    for (size_t i = 0; i < NENTRY; i++) {
        char cand[128];
        snprintf(cand, sizeof cand, "%s%s", prefixes[i], b);
        if (es_kernel_sym(m, cand) == addr) {
            size_t l = strlen(cand) < n ? strlen(cand) : n - 1; /* symbols fit; be safe */
            memcpy(out, cand, l);
            out[l] = 0;
            return true;
        }
    }
    return true;
}

/* Finds the probe points of e's syscall in the loaded image and what each
 * register may hold at each of them. */
static void setup_probes(es_machine *m, es_exposure *e, int entry, unsigned patches)
{
    static const char *const dispatch[ES_ENTRY_COUNT] = {
        "do_syscall_64", "do_int80_syscall_32", "do_fast_syscall_32", "do_fast_syscall_32",
        "do_syscall_64", "emulate_vsyscall"};
    es_probe *pd = &e->probe[ES_PROBE_DISPATCH], *pt = &e->probe[ES_PROBE_TABLE_TARGET],
             *pb = &e->probe[ES_PROBE_BODY];
    snprintf(pd->symbol, sizeof pd->symbol, "%s", dispatch[entry]);
    pd->addr = es_kernel_sym(m, pd->symbol);
    pd->present = pd->addr != 0;
    if (pd->present && entry != ES_ENTRY_VSYSCALL && !strcmp(pd->symbol, "do_syscall_64") &&
        (patches & ES_PATCH_DFE64506))
        pd->allowed[ES_RDI] = ES_TL_NR; /* dfe64506: do_syscall_64(nr, regs) */

    const char *table = is32(entry) ? "ia32_sys_call_table" : "sys_call_table";
    uint64_t tab, tabsz, slot = 0;
    unsigned idx = entry == ES_ENTRY_VSYSCALL ? (unsigned)e->nr : (unsigned)e->nr;
    if (es_kernel_sym_size(m, table, &tab, &tabsz) && (idx + 1) * 8ull <= tabsz &&
        es_kernel_read(m, tab + idx * 8ull, &slot, 8) == 0 && slot) {
        char s[sizeof pt->symbol];
        if (table_entry_name(m, slot, s, sizeof s)) {
            snprintf(pt->symbol, sizeof pt->symbol, "%s", s);
            pt->addr = slot;
            pt->present = true;
            if (!ptregs_style(s) && strcmp(s, "sys_ni_syscall") != 0)
                for (int i = 0; i < e->arity && i < 6; i++)
                    pt->allowed[cabi[i]] = arg_source(entry, i);
            body_of(m, s, pb->symbol, sizeof pb->symbol);
            if (pb->symbol[0]) {
                pb->addr = es_kernel_sym(m, pb->symbol);
                pb->present = pb->addr != 0;
                for (int i = 0; i < e->arity && i < 6; i++)
                    pb->allowed[cabi[i]] = arg_source(entry, i);
            }
        }
    }
    if (entry == ES_ENTRY_VSYSCALL) {
        /* a vsyscall passes no number: nothing derived from RAX is expected */
    }
}

int es_exposure_run(unsigned patches, int entry, int vendor, const char *name, es_exposure *e)
{
    return es_exposure_run_opts(patches, entry, vendor, name, NULL, e);
}

/* After the run: the one system call the guest made, from the tracker. */
static void take_phases(es_exposure *e, const es_phases *ph, const es_machine *m)
{
    e->timed = true;
    e->returned = m->cpl == 3 && m->stop == ES_STOP_NONE;
    for (size_t i = 0; i < es_phases_nrows(ph); i++) {
        const es_phase_row *r = es_phases_row(ph, i);
        if (r->entry != e->entry || r->count == 0)
            continue;
        e->cycles = r->cycles;
        memcpy(e->phase, r->phase, sizeof e->phase);
        return;
    }
}

int es_exposure_run_opts(unsigned patches, int entry, int vendor, const char *name,
                         const es_exposure_opts *opts, es_exposure *e)
{
    static const es_exposure_opts defaults = {.timing = false, .uarch = NULL,
                                              .mitigations = ES_MIT_DEFAULT};
    if (!opts)
        opts = &defaults;
    memset(e, 0, sizeof *e);
    e->mitigations = opts->mitigations;
    if (opts->timing && opts->uarch)
        snprintf(e->uarch, sizeof e->uarch, "%s", opts->uarch);
    e->patches = patches;
    e->entry = entry;
    snprintf(e->name, sizeof e->name, "%s", name);
    if (entry < 0 || entry >= ES_ENTRY_COUNT)
        return fail(e, "unknown entry path");
    if (vendor < 0)
        vendor = entry == ES_ENTRY_SYSENTER32 ? 0 : 1;
    e->vendor = vendor;
    /* SDM Vol. 2B SYSCALL: #UD in compatibility mode on Intel; AMD APM
     * Vol. 3 SYSENTER: #UD in long mode, compatibility mode included */
    if (entry == ES_ENTRY_SYSCALL32 && vendor == 0)
        return fail(e, "syscall32 needs --cpu amd: Intel CPUs raise #UD for SYSCALL in "
                       "compatibility mode");
    if (entry == ES_ENTRY_SYSENTER32 && vendor == 1)
        return fail(e, "sysenter32 needs --cpu intel: AMD CPUs raise #UD for SYSENTER in "
                       "long mode (compatibility mode included)");

    e->nr = -1;
    e->abi = is32(entry) ? ES_ABI_I386 : entry == ES_ENTRY_X32 ? ES_ABI_X32 : ES_ABI_X64;
    e->nr = es_syscall_nr(entry, name);
    if (e->nr >= 0)
        e->arity = is32(entry) ? arity_of(args32, NELEM(args32), e->nr)
                               : arity_of(args64, NELEM(args64), e->nr);
    if (e->nr < 0) {
        e->bad_name = true;
        if (entry == ES_ENTRY_VSYSCALL)
            snprintf(e->error, sizeof e->error,
                     "%s: the vsyscall page offers only gettimeofday, time and getcpu", name);
        else
            snprintf(e->error, sizeof e->error, "%s: no such syscall in the %s table%s", name,
                     is32(entry) ? "i386" : "x86-64",
                     entry == ES_ENTRY_X32         ? " for x32"
                     : entry == ES_ENTRY_SYSCALL64 ? " for 64-bit processes"
                                                   : "");
        return -1;
    }
    size_t imgsz;
    if (!es_kernel_image(patches, &imgsz))
        return fail(e, "this build has no guest kernel image");

    int vs = entry == ES_ENTRY_VSYSCALL
                 ? (!strcmp(name, "gettimeofday") ? 0 : !strcmp(name, "time") ? 1 : 2)
                 : 0;
    uint8_t code[256], elf[512];
    size_t label_off = 0;
    size_t n = gen_code(entry, entry == ES_ENTRY_VSYSCALL ? vs : e->nr, code, &label_off);
    size_t hdrs = e->abi == ES_ABI_X64 ? 64 + 56 : 52 + 32;
    size_t elfn = make_elf(elf, e->abi, code, n);
    uint64_t label_rip = GVADDR + hdrs + label_off;

    es_machine *m = es_machine_new(64ull << 20);
    es_taint *t = es_taint_new();
    es_timing *tm = NULL;
    es_phases *ph = NULL;
    int rc = -1;
    if (!m || !t) {
        fail(e, "out of host memory");
        goto out;
    }
    m->deterministic = true;
    m->vendor = (uint8_t)vendor;
    es_host_config cfg = {.root = "/", .deterministic = true,
                          .stdin_fd = -1, .stdout_fd = -1, .stderr_fd = -1};
    es_image img;
    char *args[] = {"exposure", NULL};
    char *env[] = {NULL};
    if (es_host_init(m, &cfg) || es_load_elf_mem(m, elf, elfn, &img) ||
        es_kernel_load(m, patches) || es_kernel_set_mitigations(m, opts->mitigations)) {
        fail(e, m->message);
        goto out;
    }
    es_kernel_set_abi(m, e->abi);
    if (opts->timing) {
        /* from the boot on, so the call finds the caches as a program's
         * first syscall would */
        char err[200] = "";
        if (opts->uarch && !(tm = es_timing_new(opts->uarch, err, sizeof err))) {
            fail(e, err);
            goto out;
        }
        if ((tm && es_timing_attach(tm, m)) || !(ph = es_phases_attach(m, tm))) {
            fail(e, "no free observer slot for the cycle model");
            goto out;
        }
    }
    if (es_start_process(m, &img, 1, args, env) || es_kernel_boot(m)) {
        fail(e, m->message);
        goto out;
    }

    setup_probes(m, e, entry, patches);
    es_probe *pd = &e->probe[ES_PROBE_DISPATCH], *pt = &e->probe[ES_PROBE_TABLE_TARGET],
             *pb = &e->probe[ES_PROBE_BODY];
    es_probe *last = pb->present ? pb : pt->present ? pt : pd;

    /* to the entry instruction, untraced */
    const uint64_t boot_budget = 20000000, run_budget = 5000000;
    uint64_t steps = 0;
    while (!(m->cpl == 3 && m->rip == label_rip)) {
        if (++steps > boot_budget || (es_step(m) != ES_OK && m->stop != ES_STOP_NONE) ||
            m->stop != ES_STOP_NONE) {
            snprintf(e->error, sizeof e->error,
                     "the generated program did not reach its syscall instruction (%s)",
                     m->message[0] ? m->message : "instruction budget");
            goto out;
        }
    }
    es_taint_label_user_regs(t, m, e->abi);
    if (entry == ES_ENTRY_VSYSCALL)
        es_taint_set_reg(t, ES_RAX, ES_TL_REG(ES_RAX)); /* a marker, not a number */
    if (es_taint_attach(m, t)) {
        fail(e, "no free observer slot");
        goto out;
    }
    bool entered = false;
    for (steps = 0; steps < run_budget; steps++) {
        if (m->cpl == 0) {
            entered = true;
            for (int p = 0; p < ES_NPROBES; p++)
                if (e->probe[p].present && !e->probe[p].hit && m->rip == e->probe[p].addr)
                    record(&e->probe[p], t);
            if (last->hit && !ph)
                break;
        } else if (entered) {
            break; /* back in user mode */
        }
        es_step(m);
        if (m->stop != ES_STOP_NONE)
            break;
    }
    if (ph)
        take_phases(e, ph, m);
    rc = 0;
out:
    es_phases_free(ph);
    es_timing_free(tm);
    es_taint_free(t);
    if (m) {
        es_host_free(m);
        es_machine_free(m);
    }
    return rc;
}

/* ---- live mode ---- */

int es_entry_of(const es_machine *m, const es_insn *d)
{
    if (d->op == ES_OP_SYSCALL)
        return m->mode == ES_MODE_32                          ? ES_ENTRY_SYSCALL32
               : (m->gpr[ES_RAX] & ES_X32_SYSCALL_BIT) != 0 ? ES_ENTRY_X32
                                                              : ES_ENTRY_SYSCALL64;
    if (d->op == ES_OP_SYSENTER)
        return ES_ENTRY_SYSENTER32;
    if (d->op == ES_OP_INT && d->nops && (d->o[0].imm & 0xff) == 0x80)
        return ES_ENTRY_INT80;
    return -1;
}

struct es_live {
    es_taint *t;
    int abi;
    unsigned patches;
    es_exposure *v;
    size_t n, cap;
    bool open;
};

static void live_before(void *ctx, es_machine *m, const es_insn *d, uint64_t rip)
{
    es_live *l = ctx;
    if (m->cpl == 3) {
        int entry = es_entry_of(m, d);
        if (entry < 0)
            return;
        if (l->n == l->cap) {
            size_t nc = l->cap ? l->cap * 2 : 16;
            es_exposure *nv = realloc(l->v, nc * sizeof *nv);
            if (!nv)
                return;
            l->v = nv;
            l->cap = nc;
        }
        es_exposure *e = &l->v[l->n++];
        memset(e, 0, sizeof *e);
        e->patches = l->patches;
        e->entry = entry;
        e->vendor = m->vendor;
        e->abi = is32(entry) ? ES_ABI_I386 : entry == ES_ENTRY_X32 ? ES_ABI_X32 : ES_ABI_X64;
        e->nr = (int)(uint32_t)(m->gpr[ES_RAX] & ~ES_X32_SYSCALL_BIT);
        if (!es_syscall_name(entry, e->nr, e->name, sizeof e->name))
            snprintf(e->name, sizeof e->name, "#%d", e->nr);
        e->arity = is32(entry) ? arity_of(args32, NELEM(args32), e->nr)
                               : arity_of(args64, NELEM(args64), e->nr);
        setup_probes(m, e, entry, l->patches);
        es_taint_label_user_regs(l->t, m, e->abi);
        l->open = true;
        return;
    }
    if (!l->open || !l->n)
        return;
    es_exposure *e = &l->v[l->n - 1];
    for (int p = 0; p < ES_NPROBES; p++)
        if (e->probe[p].present && !e->probe[p].hit && rip == e->probe[p].addr)
            record(&e->probe[p], l->t);
}

es_live *es_live_attach(es_machine *m, int abi)
{
    es_live *l = calloc(1, sizeof *l);
    if (!l)
        return NULL;
    l->t = es_taint_new();
    l->abi = abi;
    l->patches = es_kernel_patches(m);
    if (!l->t) {
        free(l);
        return NULL;
    }
    es_taint_kernel_only(l->t, true);
    /* the labeller first: the taint observer's `before` of the syscall
     * instruction must see the fresh labels */
    es_observer o = {0};
    o.ctx = l;
    o.before = live_before;
    if (es_observe(m, &o) || es_taint_attach(m, l->t)) {
        es_live_free(l);
        return NULL;
    }
    return l;
}

size_t es_live_count(const es_live *l) { return l->n; }
const es_exposure *es_live_get(const es_live *l, size_t i) { return i < l->n ? &l->v[i] : NULL; }

void es_live_free(es_live *l)
{
    if (!l)
        return;
    es_taint_free(l->t);
    free(l->v);
    free(l);
}

int es_exposure_count(const es_exposure *e)
{
    int n = 0;
    for (int p = 0; p < ES_NPROBES; p++)
        if (e->probe[p].hit)
            n += __builtin_popcount(e->probe[p].exposed);
    return n;
}

/* ---- output ---- */

static const char *const point_names[ES_NPROBES] = {"dispatch", "table_target", "body"};
/* registers in the order people list them */
static const int order[16] = {ES_RAX, ES_RBX, ES_RCX, ES_RDX, ES_RSI, ES_RDI, ES_RBP, ES_RSP,
                              ES_R8,  ES_R9,  ES_R10, ES_R11, ES_R12, ES_R13, ES_R14, ES_R15};

static void conv_name(unsigned patches, char *buf, size_t n)
{
    es_patches_name(patches, buf, n);
}

void es_exposure_print_json(FILE *f, const es_exposure *e)
{
    char conv[64];
    conv_name(e->patches, conv, sizeof conv);
    fprintf(f, "{\"convention\": \"%s\", \"patches\": [", conv);
    int k = 0;
    for (int i = 0; i < ES_NPATCHES; i++)
        if (e->patches & (1u << i))
            fprintf(f, "%s\"%.8s\"", k++ ? ", " : "", es_patch_id(i));
    /* "nr" is the table row; an x32 program passes it with the x32 bit set */
    fprintf(f, "], \"entry\": \"%s\", \"cpu\": \"%s\", \"syscall\": \"%s\", \"nr\": %d, %s"
               "\"arity\": %d, \"probes\": [",
            es_entry_name(e->entry), e->vendor ? "amd" : "intel", e->name, e->nr,
            e->entry == ES_ENTRY_X32 ? "\"x32_bit\": true, " : "", e->arity);
    k = 0;
    for (int p = 0; p < ES_NPROBES; p++) {
        const es_probe *pr = &e->probe[p];
        if (!pr->present)
            continue;
        fprintf(f, "%s{\"point\": \"%s\", \"symbol\": \"%s\", \"reached\": %s, \"regs\": {",
                k++ ? ", " : "", point_names[p], pr->symbol, pr->hit ? "true" : "false");
        int j = 0;
        for (int oi = 0; oi < 16 && pr->hit; oi++) {
            int r = order[oi];
            if (!pr->regs[r])
                continue;
            fprintf(f, "%s\"%s\": [", j++ ? ", " : "", es_taint_gpr_name(r));
            int q = 0;
            for (int b = 0; b < ES_TL_NBITS; b++)
                if (pr->regs[r] & (1u << b))
                    fprintf(f, "%s\"%s\"", q++ ? ", " : "", es_taint_label_name(b, e->abi));
            fputc(']', f);
        }
        fputs("}, \"exposed\": [", f);
        j = 0;
        for (int oi = 0; oi < 16; oi++)
            if (pr->exposed & (1u << order[oi]))
                fprintf(f, "%s\"%s\"", j++ ? ", " : "", es_taint_gpr_name(order[oi]));
        fputs("]}", f);
    }
    fputc(']', f);
    if (e->timed) {
        char mit[64];
        es_mitigations_name(e->mitigations, mit, sizeof mit);
        fprintf(f, ", \"timing\": {\"uarch\": \"%s\", \"mitigations\": \"%s\", "
                   "\"returned\": %s, \"cycles\": %llu, \"phases\": {",
                e->uarch[0] ? e->uarch : "none", mit, e->returned ? "true" : "false",
                (unsigned long long)e->cycles);
        for (int k = 0; k < ES_PH_COUNT; k++)
            fprintf(f, "%s\"%s\": %llu", k ? ", " : "", es_phase_name(k),
                    (unsigned long long)e->phase[k]);
        fputs("}}", f);
    }
    fputc('}', f);
}

void es_exposure_print_text(FILE *f, const es_exposure *e)
{
    char conv[64];
    conv_name(e->patches, conv, sizeof conv);
    fprintf(f, "%s via %s (nr %d, %d argument%s), %s, %s CPU\n", e->name,
            es_entry_name(e->entry), e->nr, e->arity, e->arity == 1 ? "" : "s", conv,
            e->vendor ? "AMD" : "Intel");
    for (int p = 0; p < ES_NPROBES; p++) {
        const es_probe *pr = &e->probe[p];
        if (!pr->present)
            continue;
        fprintf(f, "  %-13s %-32s", point_names[p], pr->symbol);
        if (!pr->hit) {
            fputs(" (not reached)\n", f);
            continue;
        }
        int col = 0;
        for (int oi = 0; oi < 16; oi++) {
            int r = order[oi];
            if (!pr->regs[r])
                continue;
            char lab[160];
            es_taint_label_str(pr->regs[r], e->abi, lab, sizeof lab);
            char cell[200];
            snprintf(cell, sizeof cell, "%s=%s%s", es_taint_gpr_name(r), lab,
                     (pr->exposed & (1u << r)) ? "!" : "");
            if (col && col + strlen(cell) > 64) {
                fprintf(f, "\n  %-13s %-32s", "", "");
                col = 0;
            }
            col += fprintf(f, " %s", cell);
        }
        if (!col)
            fputs(" (no user values)", f);
        fprintf(f, "\n");
    }
    fprintf(f, "  exposed: %d register%s  (reg=labels: the register holds a value derived from "
               "those user registers; ! = exposed)\n",
            es_exposure_count(e), es_exposure_count(e) == 1 ? "" : "s");
    if (e->timed) {
        char mit[64];
        es_mitigations_name(e->mitigations, mit, sizeof mit);
        fprintf(f, "  cycles (%s, %s, one cold call%s): %llu =", 
                e->uarch[0] ? e->uarch : "instruction count", mit,
                e->returned ? "" : ", did not return to user mode",
                (unsigned long long)e->cycles);
        for (int k = 0; k < ES_PH_COUNT; k++)
            fprintf(f, " %s %llu", es_phase_name(k), (unsigned long long)e->phase[k]);
        fputc('\n', f);
    }
}

/* ---- explain ---- */

static int dis_sym(FILE *f, es_machine *m, const char *sym, int syntax)
{
    uint64_t a, sz;
    if (!es_kernel_sym_size(m, sym, &a, &sz))
        return -1;
    if (sz == 0 || sz > 65536)
        sz = 64;
    fprintf(f, "%016llx <%s>:\n", (unsigned long long)a, sym);
    uint8_t buf[16];
    for (uint64_t off = 0; off < sz;) {
        memset(buf, 0, sizeof buf);
        size_t avail = sz - off < 15 ? (size_t)(sz - off) : 15;
        if (es_kernel_read(m, a + off, buf, avail))
            break;
        char text[128];
        size_t len = es_format(buf, avail, ES_MODE_64, a + off, syntax, text, sizeof text);
        if (!len)
            len = 1;
        es_insn d;
        char note[128] = "";
        if (es_decode(buf, avail, ES_MODE_64, a + off, &d) == ES_DECODE_OK) {
            for (int i = 0; i < d.nops; i++) {
                uint64_t tgt = 0;
                if (d.o[i].kind == ES_OPK_REL)
                    tgt = (uint64_t)d.o[i].imm;
                else if ((d.o[i].kind == ES_OPK_MEM || d.o[i].kind == ES_OPK_AGEN) &&
                         d.o[i].base == ES_REG_NONE) /* absolute, or a table indexed */
                    tgt = (uint64_t)d.o[i].disp;
                if (!tgt)
                    continue;
                uint64_t so;
                const char *s = es_kernel_addr2sym(m, tgt, &so);
                if (s) {
                    if (so)
                        snprintf(note, sizeof note, "  # <%s+0x%llx>", s, (unsigned long long)so);
                    else
                        snprintf(note, sizeof note, "  # <%s>", s);
                }
            }
        }
        fprintf(f, "  %6llx:  %s%s\n", (unsigned long long)off, text, note);
        off += len;
    }
    fputc('\n', f);
    return 0;
}

/* Does the table `table` hold any of the n addresses? */
static bool table_refers(es_machine *m, const char *table, const uint64_t *addrs, int n)
{
    uint64_t tab, sz;
    if (!es_kernel_sym_size(m, table, &tab, &sz))
        return false;
    for (uint64_t off = 0; off + 8 <= sz; off += 8) {
        uint64_t slot;
        if (es_kernel_read(m, tab + off, &slot, 8))
            return false;
        for (int i = 0; i < n; i++)
            if (slot == addrs[i])
                return true;
    }
    return false;
}

int es_explain(FILE *f, unsigned patches, const char *name, int syntax)
{
    es_machine *m = es_machine_new(16ull << 20);
    if (!m)
        return -1;
    int rc = -1;
    if (es_kernel_load(m, patches)) {
        fprintf(stderr, "entrysim: explain: %s\n", m->message);
        goto out;
    }
    char conv[64];
    es_patches_name(patches, conv, sizeof conv);
    static const char *const pats[] = {
        "__x64_sys_%s", "__se_sys_%s", "__do_sys_%s", "__ia32_sys_%s",
        "__ia32_compat_sys_%s", "__x32_compat_sys_%s", "__se_compat_sys_%s",
        "__do_compat_sys_%s", "sys_%s", "SyS_%s", "SYSC_%s", "compat_sys_%s", "C_SYSC_%s",
    };
    enum { NP = NELEM(pats) };
    char syms[NP][128];
    uint64_t addr[NP];
    int nfound = 0;
    for (size_t i = 0; i < NP; i++) {
        snprintf(syms[i], sizeof syms[i], pats[i], name);
        addr[i] = es_kernel_sym(m, syms[i]);
        if (addr[i])
            addr[nfound] = addr[i], memmove(syms[nfound], syms[i], sizeof syms[i]), nfound++;
    }
    if (!nfound) {
        /* nothing on f: the header alone would read as an empty listing */
        fprintf(stderr, "entrysim: explain: no stub named after '%s' in the %s image\n", name,
                conv);
        rc = -2;
        goto out;
    }
    fprintf(f, "# %s in the %s kernel image: the stub chain and the dispatcher\n\n", name, conv);
    for (int i = 0; i < nfound; i++) {
        /* several names, one address (v4.16's sys_X is SyS_X): the code is
         * listed under the first name printed, the others point to it */
        int first = -1;
        for (int j = 0; j < i && first < 0; j++)
            if (addr[j] == addr[i])
                first = j;
        if (first >= 0)
            fprintf(f, "%016llx <%s>: alias of <%s>\n\n", (unsigned long long)addr[i], syms[i],
                    syms[first]);
        else
            dis_sym(f, m, syms[i], syntax);
    }
    /* the dispatchers that call through a table holding one of these stubs:
     * do_syscall_64 for sys_call_table (64-bit and x32 rows), the int80 and
     * fast (SYSENTER/SYSCALL32) ones for ia32_sys_call_table */
    bool t64 = table_refers(m, "sys_call_table", addr, nfound);
    bool t32 = table_refers(m, "ia32_sys_call_table", addr, nfound);
    if (t64 || !t32)
        dis_sym(f, m, "do_syscall_64", syntax);
    if (t32) {
        dis_sym(f, m, "do_int80_syscall_32", syntax);
        dis_sym(f, m, "do_fast_syscall_32", syntax);
    }
    rc = 0;
out:
    es_machine_free(m);
    return rc;
}

/* ---- many cases (`entrysim exposure`) ---- */

size_t es_entry_syscalls(int entry, const char **names, size_t cap)
{
    size_t n = 0;
    if (is32(entry)) {
        for (size_t i = 0; i < NELEM(rows32); i++, n++)
            if (names && n < cap)
                names[n] = rows32[i].name;
        return n;
    }
    for (size_t i = 0; i < NELEM(rows64); i++)
        if (row64_usable(&rows64[i], entry)) {
            if (names && n < cap)
                names[n] = rows64[i].name;
            n++;
        }
    return n;
}

/* The totals line after several cases. */
static void print_summary(FILE *sf, const es_exposure_cfg *cfg, const int total[2],
                          const int ran[2], int perpt[2][ES_NPROBES])
{
    fprintf(sf, "summary (%s):", es_entry_name(cfg->entry));
    for (int c = 0; c < cfg->nconv; c++) {
        char conv[64];
        conv_name(cfg->convs[c], conv, sizeof conv);
        fprintf(sf, "%s %s: %d exposed register%s in %d syscall%s (dispatch %d, "
                    "table_target %d, body %d)",
                c ? ";" : "", conv, total[c], total[c] == 1 ? "" : "s", ran[c],
                ran[c] == 1 ? "" : "s", perpt[c][0], perpt[c][1], perpt[c][2]);
    }
    fputc('\n', sf);
}

int es_exposure_report(const es_exposure_cfg *cfg, FILE *out, FILE *diag)
{
    const unsigned *convs = cfg->convs;
    int nconv = cfg->nconv, entry = cfg->entry, vendor = cfg->vendor;
    bool all = cfg->all, json = cfg->json;
    const es_exposure_opts opts = cfg->opts;
    /* the names to run */
    size_t cap = cfg->all ? es_entry_syscalls(entry, NULL, 0) : 1, nn = 1;
    const char **names = calloc(cap ? cap : 1, sizeof *names);
    if (!names)
        return 1;
    if (cfg->all)
        nn = es_entry_syscalls(entry, names, cap);
    else
        names[0] = cfg->name;

    int status = 0, cases = 0;
    int total[2] = {0, 0}, perpt[2][ES_NPROBES] = {{0}}, ran[2] = {0, 0};
    for (size_t k = 0; k < nn; k++) {
        for (int c = 0; c < nconv; c++) {
            es_exposure e;
            if (es_exposure_run_opts(convs[c], entry, vendor, names[k], &opts, &e)) {
                fprintf(diag, "entrysim: exposure: %s\n", e.error);
                /* a name the entry does not have is the user's mistake */
                status = e.bad_name && !all ? 2 : 1;
                if (!all)
                    goto done;
                continue;
            }
            ran[c]++;
            total[c] += es_exposure_count(&e);
            for (int p = 0; p < ES_NPROBES; p++)
                if (e.probe[p].hit)
                    perpt[c][p] += __builtin_popcount(e.probe[p].exposed);
            if (json) {
                fputs(cases ? ",\n " : "[\n ", out);
                es_exposure_print_json(out, &e);
            } else {
                es_exposure_print_text(out, &e);
            }
            cases++;
        }
        if (!json && nconv > 1 && !all)
            fputc('\n', out);
    }
done:
    if (json && cases)
        fputs("\n]\n", out);
    else if (json && !status)
        fputs("[]\n", out);
    /* a summary of nothing would read as "0 exposed registers" */
    if ((all || nconv > 1) && cases)
        print_summary(json ? diag : out, cfg, total, ran, perpt);
    free(names);
    return status;
}

