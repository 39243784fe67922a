/* demo.c - a tiny static x86-64 program, hand-assembled, wrapped in an ELF
 * header at run time, so `entrysim demo` works with no files around. */
#include "demo.h"

#include <stdlib.h>
#include <string.h>

#define VADDR 0x400000u
#define HDRS (64 + 56) /* ELF header + one program header */

/* Code at 0x400078 (after the headers); the message follows it directly. */
static const uint8_t code[] = {
    0xb8, 0x01, 0x00, 0x00, 0x00,             /* mov eax, 1        ; write */
    0xbf, 0x01, 0x00, 0x00, 0x00,             /* mov edi, 1        ; stdout */
    0x48, 0x8d, 0x35, 0x5b, 0x00, 0x00, 0x00, /* lea rsi, [rip+0x5b] ; msg */
    0xba, 0x70, 0x00, 0x00, 0x00,             /* mov edx, 0x70     ; length */
    0x0f, 0x05,                               /* syscall */
    0x31, 0xdb,                               /* xor ebx, ebx      ; sum */
    0xb9, 0x40, 0x42, 0x0f, 0x00,             /* mov ecx, 1000000 */
    0x48, 0x89, 0xc8,                         /* 1: mov rax, rcx */
    0x48, 0x0f, 0xaf, 0xc1,                   /* imul rax, rcx */
    0x48, 0x01, 0xc3,                         /* add rbx, rax */
    0x48, 0xff, 0xc9,                         /* dec rcx */
    0x75, 0xf1,                               /* jne 1b */
    0x48, 0x8d, 0x74, 0x24, 0xff,             /* lea rsi, [rsp-1]  ; digits go below rsp */
    0xc6, 0x06, 0x0a,                         /* mov byte [rsi], '\n' */
    0x48, 0x89, 0xd8,                         /* mov rax, rbx */
    0x41, 0xb8, 0x0a, 0x00, 0x00, 0x00,       /* mov r8d, 10 */
    0x31, 0xd2,                               /* 2: xor edx, edx */
    0x49, 0xf7, 0xf0,                         /* div r8 */
    0x80, 0xc2, 0x30,                         /* add dl, '0' */
    0x48, 0xff, 0xce,                         /* dec rsi */
    0x88, 0x16,                               /* mov [rsi], dl */
    0x48, 0x85, 0xc0,                         /* test rax, rax */
    0x75, 0xee,                               /* jne 2b */
    0x48, 0x89, 0xe2,                         /* mov rdx, rsp */
    0x48, 0x29, 0xf2,                         /* sub rdx, rsi      ; length */
    0xb8, 0x01, 0x00, 0x00, 0x00,             /* mov eax, 1        ; write */
    0xbf, 0x01, 0x00, 0x00, 0x00,             /* mov edi, 1 */
    0x0f, 0x05,                               /* syscall */
    0xb8, 0xe7, 0x00, 0x00, 0x00,             /* mov eax, 231      ; exit_group */
    0x31, 0xff,                               /* xor edi, edi */
    0x0f, 0x05,                               /* syscall */
};

static const char msg[] = "Hello from a 64-bit guest program running on entrysim.\n"
                          "It adds up i*i for i = 1..1000000 in a loop; the sum is:\n";

/* the lea's displacement and the mov edx's length above assume these */
_Static_assert(sizeof code == 0x6c, "code size changed: fix the lea displacement");
_Static_assert(sizeof msg - 1 == 0x70, "message length changed: fix mov edx");

const char es_demo_expected[] =
    "Hello from a 64-bit guest program running on entrysim.\n"
    "It adds up i*i for i = 1..1000000 in a loop; the sum is:\n"
    "333333833333500000\n";

static void put(uint8_t *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

size_t es_demo_elf(uint8_t *buf, size_t cap)
{
    size_t size = HDRS + sizeof code + sizeof msg - 1;
    if (cap < size)
        return 0;
    memset(buf, 0, HDRS);
    /* ELF header: ELFCLASS64, little-endian, ET_EXEC, EM_X86_64 */
    memcpy(buf, "\177ELF\2\1\1", 7);
    put(buf + 16, 2, 2);              /* e_type ET_EXEC */
    put(buf + 18, 62, 2);             /* e_machine EM_X86_64 */
    put(buf + 20, 1, 4);              /* e_version */
    put(buf + 24, VADDR + HDRS, 8);   /* e_entry */
    put(buf + 32, 64, 8);             /* e_phoff */
    put(buf + 52, 64, 2);             /* e_ehsize */
    put(buf + 54, 56, 2);             /* e_phentsize */
    put(buf + 56, 1, 2);              /* e_phnum */
    /* one PT_LOAD, R+X, the whole file at VADDR */
    uint8_t *ph = buf + 64;
    put(ph + 0, 1, 4);                /* PT_LOAD */
    put(ph + 4, 5, 4);                /* PF_R | PF_X */
    put(ph + 16, VADDR, 8);           /* p_vaddr */
    put(ph + 24, VADDR, 8);           /* p_paddr */
    put(ph + 32, size, 8);            /* p_filesz */
    put(ph + 40, size, 8);            /* p_memsz */
    put(ph + 48, 0x1000, 8);          /* p_align */
    memcpy(buf + HDRS, code, sizeof code);
    memcpy(buf + HDRS + sizeof code, msg, sizeof msg - 1);
    return size;
}

/* ---- the exposure comparison ---- */

#include <fcntl.h>
#include <unistd.h>

#include "exposure.h"
#include "host.h"
#include "kernel.h"
#include "loader.h"

#define DEMO_MAXCALLS 8

typedef struct demo_run {
    int status;
    size_t n;
    es_exposure calls[DEMO_MAXCALLS];
} demo_run;

/* One run of the demo program through the kernel built with `patches`;
 * guest stdout goes to fd out_fd. */
static int demo_once(unsigned patches, int vendor, int out_fd, demo_run *r, char *err, size_t errn)
{
    uint8_t elf[1024];
    size_t n = es_demo_elf(elf, sizeof elf);
    es_machine *m = es_machine_new(256ull << 20);
    if (!m) {
        snprintf(err, errn, "cannot allocate the machine");
        return -1;
    }
    m->deterministic = true;
    m->vendor = (uint8_t)vendor;
    es_host_config cfg = {.root = ".", .deterministic = true, .stdin_fd = 0,
                          .stdout_fd = out_fd, .stderr_fd = 2};
    es_image img;
    char *args[] = {"demo", NULL};
    char *env[] = {NULL};
    es_live *l = NULL;
    int rc = -1;
    if (es_host_init(m, &cfg) || es_load_elf_mem(m, elf, n, &img) ||
        es_kernel_load(m, patches)) {
        snprintf(err, errn, "%s", m->message);
        goto out;
    }
    es_kernel_set_abi(m, img.abi);
    if (es_start_process(m, &img, 1, args, env) || es_kernel_boot(m)) {
        snprintf(err, errn, "%s", m->message);
        goto out;
    }
    l = es_live_attach(m, img.abi);
    if (!l) {
        snprintf(err, errn, "cannot attach taint tracking");
        goto out;
    }
    m->max_insns = 200000000;
    int stop = es_run(m);
    if (stop != ES_STOP_EXIT) {
        snprintf(err, errn, "the demo program did not exit normally: %s",
                 m->message[0] ? m->message : "stopped");
        goto out;
    }
    r->status = m->exit_status;
    r->n = 0;
    for (size_t i = 0; i < es_live_count(l) && r->n < DEMO_MAXCALLS; i++)
        r->calls[r->n++] = *es_live_get(l, i);
    rc = 0;
out:
    es_unobserve_all(m);
    es_live_free(l);
    es_host_free(m);
    es_machine_free(m);
    return rc;
}

static void demo_probe(FILE *out, const es_exposure *e, int p)
{
    /* the point names exposure prints */
    static const char *const pn[ES_NPROBES] = {"dispatch", "table_target", "body"};
    const es_probe *pr = &e->probe[p];
    if (!pr->present)
        return;
    fprintf(out, "    %-13s %-24s", pn[p], pr->symbol);
    if (!pr->hit) {
        fputs(" (not reached)\n", out);
        return;
    }
    int shown = 0;
    /* registers in the order of the C calling convention, then the rest */
    static const int ord[16] = {ES_RDI, ES_RSI, ES_RDX, ES_RCX, ES_R8, ES_R9, ES_RAX, ES_RBX,
                                ES_RBP, ES_RSP, ES_R10, ES_R11, ES_R12, ES_R13, ES_R14, ES_R15};
    for (int i = 0; i < 16; i++) {
        int r = ord[i];
        es_label l = pr->regs[r];
        if (!l) /* nr alone is shown, as exposure does, and never counted */
            continue;
        char lab[128];
        es_taint_label_str(l, e->abi, lab, sizeof lab);
        fprintf(out, " %s=%s%s", es_taint_gpr_name(r), lab, (pr->exposed >> r) & 1 ? "!" : "");
        shown++;
    }
    if (!shown)
        fputs(" (no user values)", out);
    fputc('\n', out);
}

int es_demo_compare(FILE *out, int vendor)
{
    static const unsigned convs[2] = {ES_CONV_V416, ES_CONV_V417};
    static const char *const cname[2] = {"v4.16", "v4.17"};
    demo_run *runs = calloc(2, sizeof *runs);
    if (!runs)
        return 1;
    fprintf(out,
            "entrysim demo: a built-in static x86-64 program (it prints a greeting, sums i*i for\n"
            "i = 1..1000000 and prints the sum) runs twice on the simulated CPU, each time through\n"
            "the modeled Linux kernel: with the v4.16 syscall convention, then with v4.17's (the\n"
            "series dfe64506, fa697140, ebeb8c82, 6dc936f1).  Taint tracking labels every user\n"
            "register at each syscall instruction and follows the values into the kernel.\n"
            "--- guest output ---\n");
    fflush(out);
    int devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
    char err[300];
    int status = 0;
    for (int c = 0; c < 2; c++) {
        if (demo_once(convs[c], vendor, c == 0 ? 1 : (devnull >= 0 ? devnull : 1), &runs[c], err,
                      sizeof err)) {
            fprintf(stderr, "entrysim: demo (%s): %s\n", cname[c], err);
            status = 1;
            goto done;
        }
    }
    if (devnull >= 0)
        close(devnull);
    devnull = -1;
    fprintf(out, "--- guest exited with status %d (v4.16) and %d (v4.17) ---\n\n", runs[0].status,
            runs[1].status);
    fprintf(out,
            "User values in registers at the first instruction of the kernel's C functions\n"
            "(reg=labels: the register holds a value derived from those user registers at the\n"
            "syscall instruction; nr = the syscall number, carried by every path and never\n"
            "counted; rip = the user RIP that SYSCALL saved in rcx; ! = exposed: not a declared\n"
            "argument of that function in that register)\n");
    int tot[2] = {0, 0};
    size_t n = runs[0].n > runs[1].n ? runs[0].n : runs[1].n;
    for (size_t i = 0; i < n; i++) {
        const es_exposure *e = i < runs[0].n ? &runs[0].calls[i] : &runs[1].calls[i];
        fprintf(out, "\nsyscall %zu: %s (nr %d, %d argument%s)\n", i + 1, e->name, e->nr,
                e->arity, e->arity == 1 ? "" : "s");
        for (int c = 0; c < 2; c++) {
            if (i >= runs[c].n)
                continue;
            const es_exposure *x = &runs[c].calls[i];
            fprintf(out, "  %s: %d exposed\n", cname[c], es_exposure_count(x));
            for (int p = 0; p < ES_NPROBES; p++)
                demo_probe(out, x, p);
            tot[c] += es_exposure_count(x);
        }
    }
    fprintf(out,
            "\nexposed registers over the program's %zu syscalls: v4.16 %d, v4.17 %d\n"
            "Next: `entrysim exposure --all` (every syscall, --entry int80|sysenter32|syscall32|\n"
            "x32|vsyscall, --patches for one patch of the series at a time), `entrysim explain\n"
            "recv` (the stub as compiled), `entrysim run PROGRAM` (any static program through the\n"
            "modeled kernel).\n",
            n, tot[0], tot[1]);
    status = runs[0].status == runs[1].status ? runs[0].status : 1;
done:
    if (devnull >= 0)
        close(devnull);
    free(runs);
    return status;
}
