/* loader.c - static ELF loading and the Linux initial process state.
 *
 * What Linux's binfmt_elf does for a program without an interpreter, and
 * nothing more: map the PT_LOAD segments (static-pie ET_DYN at
 * ELF_ET_DYN_BASE; such programs relocate themselves in their start code),
 * then lay out argv, envp and auxv as create_elf_tables does and set the
 * registers as start_thread / compat_start_thread do.  Every header field is
 * checked against the file size before use: a malformed file gets a
 * one-line reason, never a host crash.
 */
#include "loader.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "host.h"
#include "kernel.h"
#include "es_boot.h"
#include "fault.h"
#include "mem.h"
#include "seg.h"
#include "vm.h"

#define PAGE 4096ull
#define PAGE_START(x) ((x) & ~(PAGE - 1))
#define PAGE_ALIGN(x) (((x) + PAGE - 1) & ~(PAGE - 1))

/* ELF constants (System V gABI; psABI x86-64 and i386). */
#define ET_REL 1
#define ET_EXEC 2
#define ET_DYN 3
#define ET_CORE 4
#define EM_386 3
#define EM_X86_64 62
#define PT_LOAD 1
#define PT_INTERP 3
#define PT_PHDR 6
#define PT_GNU_STACK 0x6474e551u
#define PF_X 1
#define PF_W 2
#define PF_R 4

/* Address-space layout (arch/x86/include/asm/processor.h, elf.h). */
#define TOP_64 0x7ffffffff000ull      /* TASK_SIZE_MAX: 47-bit user space */
#define TOP_32 0xffffe000ull          /* IA32_PAGE_OFFSET: i386 and x32 tasks */
#define MMAP_GAP (128ull << 20)       /* the minimum stack gap below mmap_base */
#define DYN_BASE_64 0x555555554000ull /* ELF_ET_DYN_BASE, 2/3 of 47 bits */
#define DYN_BASE_32 0x56555000ull     /* the same rule for a 4 GiB task */
#define STACK_SIZE (8ull << 20)       /* RLIMIT_STACK's usual 8 MiB */
#define MAX_FILE (1ull << 30)
#define MAX_ARGS_BYTES (2ull << 20)   /* a quarter of the stack, as execve */

/* auxv tags (include/uapi/linux/auxvec.h, arch/x86/include/uapi/asm/auxvec.h) */
enum {
    AT_NULL = 0, AT_PHDR = 3, AT_PHENT = 4, AT_PHNUM = 5, AT_PAGESZ = 6, AT_BASE = 7,
    AT_FLAGS = 8, AT_ENTRY = 9, AT_UID = 11, AT_EUID = 12, AT_GID = 13, AT_EGID = 14,
    AT_PLATFORM = 15, AT_HWCAP = 16, AT_CLKTCK = 17, AT_SECURE = 23, AT_RANDOM = 25,
    AT_HWCAP2 = 26, AT_EXECFN = 31, AT_SYSINFO = 32, AT_MINSIGSTKSZ = 51,
};

typedef struct phdr {
    uint32_t type, flags;
    uint64_t offset, vaddr, filesz, memsz;
} phdr;

static uint64_t rd(const uint8_t *p, int n)
{
    uint64_t v = 0;
    memcpy(&v, p, (size_t)n); /* little-endian host and file */
    return v;
}

static int to_prot(uint32_t flags, bool read_implies_exec)
{
    int p = ((flags & PF_R) ? ES_PROT_R : 0) | ((flags & PF_W) ? ES_PROT_W : 0) |
            ((flags & PF_X) ? ES_PROT_X : 0);
    if (read_implies_exec && (p & ES_PROT_R))
        p |= ES_PROT_X;
    return p;
}

/* What the ELF header says, checked. */
typedef struct elf_hdr {
    bool is64;
    unsigned type;
    int abi;
    uint64_t entry, phoff;
    unsigned phnum, phent; /* phent: the entry size the class requires */
} elf_hdr;

/* What the program headers say, checked. */
typedef struct elf_segs {
    phdr *ph; /* phnum entries */
    bool has_stack_hdr, exec_stack, has_phdr;
    uint64_t lo, hi, phdr_va; /* page-aligned span of the PT_LOADs */
} elf_segs;

static int read_ehdr(es_machine *m, const uint8_t *data, size_t size, elf_hdr *e)
{
    if (size == 0)
        return es_fail_msg(m, "empty file, not an ELF executable");
    if (size < 16 || memcmp(data, "\177ELF", 4) != 0)
        return es_fail_msg(m, "not an ELF file");
    int cls = data[4];
    if (cls != 1 && cls != 2)
        return es_fail_msg(m, "bad ELF class %d", cls);
    if (data[5] != 1)
        return es_fail_msg(m, "not a little-endian ELF file");
    if (data[6] != 1)
        return es_fail_msg(m, "unsupported ELF version %d", data[6]);
    bool is64 = e->is64 = cls == 2;
    size_t ehsize = is64 ? 64 : 52;
    if (size < ehsize)
        return es_fail_msg(m, "truncated ELF header (%zu of %zu bytes)", size, ehsize);

    e->type = (unsigned)rd(data + 16, 2);
    unsigned machine = (unsigned)rd(data + 18, 2);
    e->entry = is64 ? rd(data + 24, 8) : rd(data + 24, 4);
    e->phoff = is64 ? rd(data + 32, 8) : rd(data + 28, 4);
    unsigned phentsize = (unsigned)rd(data + (is64 ? 54 : 42), 2);
    e->phnum = (unsigned)rd(data + (is64 ? 56 : 44), 2);

    if (e->type == ET_REL)
        return es_fail_msg(m, "relocatable object file, not an executable (link it first)");
    if (e->type == ET_CORE)
        return es_fail_msg(m, "core dump, not an executable");
    if (e->type != ET_EXEC && e->type != ET_DYN)
        return es_fail_msg(m, "unknown ELF file type %u", e->type);
    if (machine == EM_X86_64)
        e->abi = is64 ? ES_ABI_X64 : ES_ABI_X32;
    else if (machine == EM_386 && !is64)
        e->abi = ES_ABI_I386;
    else
        return es_fail_msg(m, "unsupported machine %u (not x86-64, i386 or x32)", machine);

    unsigned want = e->phent = is64 ? 56 : 32;
    if (phentsize != want)
        return es_fail_msg(m, "bad program header entry size %u (expected %u)", phentsize, want);
    /* Linux's bound (load_elf_phdrs): the table fits in 64 KiB */
    if (e->phnum == 0)
        return es_fail_msg(m, "no program headers");
    if (e->phnum > 65536u / want)
        return es_fail_msg(m, "too many program headers (%u)", e->phnum);
    if (e->phoff > size || (uint64_t)e->phnum * want > size - e->phoff)
        return es_fail_msg(m, "program headers lie outside the file (truncated file?)");
    return 0;
}

static void read_phdr(const uint8_t *p, bool is64, phdr *h)
{
    h->type = (uint32_t)rd(p, 4);
    if (is64) {
        h->flags = (uint32_t)rd(p + 4, 4);
        h->offset = rd(p + 8, 8);
        h->vaddr = rd(p + 16, 8);
        h->filesz = rd(p + 32, 8);
        h->memsz = rd(p + 40, 8);
    } else {
        h->offset = rd(p + 4, 4);
        h->vaddr = rd(p + 8, 4);
        h->filesz = rd(p + 16, 4);
        h->memsz = rd(p + 20, 4);
        h->flags = (uint32_t)rd(p + 24, 4);
    }
}

/* A PT_LOAD with memsz != 0: inside the file, mappable as mmap would. */
static int check_load(es_machine *m, const phdr *h, unsigned i, size_t size)
{
    if (h->filesz > h->memsz)
        return es_fail_msg(m, "segment %u: file size exceeds memory size", i);
    if (h->offset > size || h->filesz > size - h->offset)
        return es_fail_msg(m, "segment %u extends past the end of the file (truncated file?)", i);
    if ((h->offset ^ h->vaddr) & (PAGE - 1))
        return es_fail_msg(m, "segment %u: file offset and address differ modulo the page size",
                           i);
    if (h->vaddr + h->memsz < h->vaddr || h->vaddr + h->memsz > ~0ull - PAGE)
        return es_fail_msg(m, "segment %u: address range overflows", i);
    return 0;
}

/* Reads and checks every program header into s (s->ph allocated by the
 * caller). */
static int read_segs(es_machine *m, const uint8_t *data, size_t size, const elf_hdr *e,
                     elf_segs *s)
{
    s->lo = ~0ull;
    int nload = 0;
    for (unsigned i = 0; i < e->phnum; i++) {
        phdr *h = &s->ph[i];
        read_phdr(data + e->phoff + (uint64_t)i * e->phent, e->is64, h);
        switch (h->type) {
        case PT_INTERP:
            return es_fail_msg(m, "dynamically linked programs are not supported; "
                                  "link with -static");
        case PT_GNU_STACK:
            s->has_stack_hdr = true;
            s->exec_stack = (h->flags & PF_X) != 0;
            break;
        case PT_PHDR:
            s->has_phdr = true;
            s->phdr_va = h->vaddr;
            break;
        case PT_LOAD:
            if (h->memsz == 0)
                break;
            if (check_load(m, h, i, size))
                return -1;
            if (PAGE_START(h->vaddr) < s->lo)
                s->lo = PAGE_START(h->vaddr);
            if (PAGE_ALIGN(h->vaddr + h->memsz) > s->hi)
                s->hi = PAGE_ALIGN(h->vaddr + h->memsz);
            nload++;
            break;
        default:
            break;
        }
    }
    return nload ? 0 : es_fail_msg(m, "no loadable segments");
}

/* The load bias (static-pie) and the checks that the image and its entry
 * fit below `top`. */
static int place(es_machine *m, const elf_hdr *e, const elf_segs *s, uint64_t top,
                 uint64_t *bias_out)
{
    /* a static-pie sits at ELF_ET_DYN_BASE (load_elf_binary: load_bias =
     * ELF_PAGESTART(ELF_ET_DYN_BASE - vaddr)); unsigned wrap-around is
     * intended for images linked above the base */
    uint64_t bias =
        e->type == ET_DYN ? PAGE_START((e->is64 ? DYN_BASE_64 : DYN_BASE_32) - s->lo) : 0;
    uint64_t span = s->hi - s->lo;
    uint64_t base = s->lo + bias;
    if (span > top || base < ES_VM_MMAP_MIN || base > top - span)
        return es_fail_msg(m, "segments at 0x%llx..0x%llx lie outside the user address space",
                           (unsigned long long)base, (unsigned long long)(base + span));
    /* The stack is a fixed mapping of the 8 MiB below the top (Linux's
     * grows down to RLIMIT_STACK from there), mapped after the segments:
     * a segment there would be replaced by it.  Refused rather than
     * squeezing the stack: Linux itself fails the exec when a segment meets
     * the stack's pages ("elf segment ... requested but the memory is
     * mapped already"), and no linker puts a program there. */
    if (base + span > top - STACK_SIZE)
        return es_fail_msg(m,
                           "segments at 0x%llx..0x%llx overlap the stack (the 8 MiB below "
                           "0x%llx)",
                           (unsigned long long)base, (unsigned long long)(base + span),
                           (unsigned long long)top);
    if (e->entry + bias >= top || (!e->is64 && e->entry > 0xffffffffull))
        return es_fail_msg(m, "entry point 0x%llx lies outside the user address space",
                           (unsigned long long)(e->entry + bias));
    *bias_out = bias;
    return 0;
}

/* Maps the PT_LOADs at bias: everything writable first so the kernel-side
 * copy can fill read-only pages, then each segment's protection (later
 * segments win on a shared page, as Linux's successive MAP_FIXED mappings
 * do). */
static int map_segs(es_machine *m, const uint8_t *data, const elf_hdr *e, const elf_segs *s,
                    uint64_t bias, bool rie)
{
    for (unsigned i = 0; i < e->phnum; i++) {
        const phdr *h = &s->ph[i];
        if (h->type != PT_LOAD || !h->memsz)
            continue;
        uint64_t a = PAGE_START(h->vaddr) + bias, z = PAGE_ALIGN(h->vaddr + h->memsz) + bias;
        int r = es_vm_map(m, a, z - a, ES_PROT_R | ES_PROT_W);
        if (r)
            return es_fail_msg(m, "cannot map segment %u at 0x%llx (error %d)", i,
                               (unsigned long long)a, -r);
    }
    for (unsigned i = 0; i < e->phnum; i++) {
        const phdr *h = &s->ph[i];
        if (h->type != PT_LOAD || !h->memsz)
            continue;
        /* the page's head comes from the file too, as with mmap of the
         * page-aligned offset; the bss tail stays zero */
        uint64_t pre = h->vaddr & (PAGE - 1);
        uint64_t n = h->filesz + (h->filesz ? pre : 0);
        if (n && es_copy_to_guest(m, PAGE_START(h->vaddr) + bias, data + h->offset - pre, n))
            return es_fail_msg(m, "out of guest memory loading segment %u", i);
    }
    for (unsigned i = 0; i < e->phnum; i++) {
        const phdr *h = &s->ph[i];
        if (h->type != PT_LOAD || !h->memsz)
            continue;
        uint64_t a = PAGE_START(h->vaddr) + bias, z = PAGE_ALIGN(h->vaddr + h->memsz) + bias;
        if (es_vm_protect(m, a, z - a, to_prot(h->flags, rie)))
            return es_fail_msg(m, "cannot protect segment %u", i);
    }
    return 0;
}

/* AT_PHDR: PT_PHDR when present, else where the table lies in a loaded
 * segment (load_elf_binary's phdr_addr); 0 when neither. */
static uint64_t phdr_addr(const elf_hdr *e, const elf_segs *s, uint64_t bias)
{
    if (s->has_phdr)
        return s->phdr_va + bias;
    uint64_t tbl = (uint64_t)e->phnum * e->phent;
    for (unsigned i = 0; i < e->phnum; i++) {
        const phdr *h = &s->ph[i];
        if (h->type == PT_LOAD && e->phoff >= h->offset && e->phoff - h->offset <= h->filesz &&
            tbl <= h->filesz - (e->phoff - h->offset))
            return h->vaddr + (e->phoff - h->offset) + bias;
    }
    return 0;
}

/* Everything after the headers were read: address space, segments,
 * stack, and *img. */
static int load_segs(es_machine *m, const uint8_t *data, const elf_hdr *e, elf_segs *s,
                     es_image *img)
{
    uint64_t top = e->is64 ? TOP_64 : TOP_32, bias = 0;
    if (place(m, e, s, top, &bias))
        return -1;
    /* Linux gives 32-bit tasks without PT_GNU_STACK READ_IMPLIES_EXEC
     * (elf_read_implies_exec, arch/x86/include/asm/elf.h); 64-bit ones only
     * an executable stack */
    bool rie = !e->is64 && !s->has_stack_hdr;
    if (!s->has_stack_hdr)
        s->exec_stack = true; /* both: "missing PT_GNU_STACK: exec-stack" */

    if (!m->cr3) {
        m->cr3 = es_new_pml4(m);
        if (!m->cr3)
            return es_fail_msg(m, "out of guest memory");
        es_tlb_flush(m);
    }
    es_vm_set_layout(m, top, top - STACK_SIZE - MMAP_GAP);
    if (map_segs(m, data, e, s, bias, rie))
        return -1;
    /* the stack: 8 MiB right below the top of the user address space */
    if (es_vm_map(m, top - STACK_SIZE, STACK_SIZE,
                  ES_PROT_R | ES_PROT_W | (s->exec_stack ? ES_PROT_X : 0)))
        return es_fail_msg(m, "cannot map the stack");

    img->phdr = phdr_addr(e, s, bias);
    img->abi = e->abi;
    img->entry = e->entry + bias;
    img->load_bias = bias;
    img->phnum = e->phnum;
    img->phent = e->phent;
    img->brk_start = s->hi + bias;
    img->stack_top = top;
    return 0;
}

int es_elf_check(es_machine *m, const uint8_t *data, size_t size, int *abi, uint64_t *lo,
                 uint64_t *hi)
{
    elf_hdr e = {0};
    if (read_ehdr(m, data, size, &e))
        return -ENOEXEC;
    elf_segs s = {0};
    s.ph = calloc(e.phnum, sizeof *s.ph);
    if (!s.ph) {
        es_fail_msg(m, "out of host memory");
        return -ENOMEM;
    }
    uint64_t bias = 0;
    int rc = read_segs(m, data, size, &e, &s) || place(m, &e, &s, e.is64 ? TOP_64 : TOP_32, &bias)
                 ? -ENOEXEC
                 : 0;
    free(s.ph);
    *abi = e.abi;
    *lo = s.lo + bias;
    *hi = s.hi + bias;
    return rc;
}

int es_load_elf_mem(es_machine *m, const uint8_t *data, size_t size, es_image *img)
{
    memset(img, 0, sizeof *img);
    elf_hdr e = {0};
    if (read_ehdr(m, data, size, &e))
        return -1;
    elf_segs s = {0};
    s.ph = calloc(e.phnum, sizeof *s.ph);
    if (!s.ph)
        return es_fail_msg(m, "out of host memory");
    int rc = read_segs(m, data, size, &e, &s) || load_segs(m, data, &e, &s, img) ? -1 : 0;
    free(s.ph);
    return rc;
}

int es_load_elf(es_machine *m, const char *path, es_image *img)
{
    memset(img, 0, sizeof *img);
    /* O_NONBLOCK: opening a FIFO for reading would wait for a writer; the
     * type is checked on the descriptor before anything is read (a regular
     * file's reads ignore the flag) */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return es_fail_msg(m, "cannot open: %s", strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return es_fail_msg(m, "cannot stat: %s", strerror(e));
    }
    if (S_ISDIR(st.st_mode)) {
        close(fd);
        return es_fail_msg(m, "is a directory");
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return es_fail_msg(m, "not a regular file");
    }
    /* execve's own check (may_open with MAY_EXEC): execute permission for
     * the effective ids, root included (it needs one execute bit), and not
     * on a noexec mount; EACCES, which a shell reports as "Permission
     * denied" with status 126 */
    if (faccessat(AT_FDCWD, path, X_OK, AT_EACCESS) != 0) {
        int e = errno;
        close(fd);
        return es_fail_msg(m, "%s", strerror(e));
    }
    if ((uint64_t)st.st_size > MAX_FILE) {
        close(fd);
        return es_fail_msg(m, "file too large (%lld bytes)", (long long)st.st_size);
    }
    size_t size = (size_t)st.st_size;
    uint8_t *buf = malloc(size ? size : 1);
    if (!buf) {
        close(fd);
        return es_fail_msg(m, "out of host memory");
    }
    size_t got = 0;
    while (got < size) {
        ssize_t r = read(fd, buf + got, size - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    int rc = es_load_elf_mem(m, buf, got, img);
    free(buf);
    return rc;
}

/* ---- the initial stack ---- */

/* AT_HWCAP is CPUID.1:EDX on x86 (boot_cpu_data.x86_capability[CPUID_1_EDX]):
 * ask the modelled CPU by executing its CPUID handler, so the two cannot
 * disagree.  Registers are restored; nothing else is touched. */
static uint32_t hwcap(es_machine *m)
{
    uint64_t saved[16];
    memcpy(saved, m->gpr, sizeof saved);
    uint32_t edx = 0x07088131u; /* FPU TSC MSR CX8 CMOV CLFSH FXSR SSE SSE2 */
    es_insn d;
    memset(&d, 0, sizeof d);
    d.op = ES_OP_CPUID;
    d.len = 2;
    d.mode = m->mode;
    m->gpr[ES_RAX] = 1;
    m->gpr[ES_RCX] = 0;
    if (m->handlers && m->handlers[ES_OP_CPUID] && m->handlers[ES_OP_CPUID](m, &d) == ES_OK)
        edx = (uint32_t)m->gpr[ES_RDX];
    memcpy(m->gpr, saved, sizeof saved);
    return edx;
}

/* AT_MINSIGSTKSZ: the signal frame Linux would build with only x87 and SSE
 * state enabled (XCR0 = 3): sigframe + 512-byte FXSAVE area + 64-byte
 * XSAVE header + FP_XSTATE_MAGIC2, rounded to 64 (signal_frame_size). */
static uint64_t minsigstksz(int abi)
{
    return abi == ES_ABI_I386 ? 0x4a0 : 0x480;
}

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void random16(es_machine *m, uint8_t out[16])
{
    if (!m->deterministic && getrandom(out, 16, GRND_NONBLOCK) == 16)
        return;
    uint64_t s = m->deterministic ? 0x656e74727973696dull /* "entrysim" */
                                  : (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
    uint64_t a = splitmix(&s), b = splitmix(&s);
    memcpy(out, &a, 8);
    memcpy(out + 8, &b, 8);
}

/* A flat segment register from m->gdt, as the selector load at exec
 * leaves it. */
static void set_seg(es_machine *m, int seg, uint16_t sel)
{
    es_segreg *r = &m->seg[seg];
    uint64_t d = sel >= 8 && (sel >> 3) < 16 ? m->gdt[sel >> 3] : 0;
    r->sel = sel;
    r->base = 0;
    r->attr = (uint16_t)(((d >> 40) & 0xff) | (((d >> 52) & 0xf) << 8));
    r->limit = d ? 0xffffffffu : 0;
}

/* The initial stack as es_start_process builds it, from the top down. */
typedef struct init_stack {
    int ps;               /* user pointer size */
    int argc, envc;
    const char *execfn;   /* AT_EXECFN's string (NULL: argv[0]) */
    uint64_t *argp, *envp; /* guest addresses of the argv and envp strings */
    uint64_t fn_addr, plat_addr, rnd_addr;
    uint64_t sp;
} init_stack;

static int oom_stack(es_machine *m)
{
    return es_fail_msg(m, "out of guest memory building the initial stack");
}

/* Copies the strings at (and returns) `str`, their guest addresses into
 * out[0..n-1]; -1 when guest memory runs out. */
static int copy_strings(es_machine *m, uint64_t *str, int n, char *const s[], uint64_t *out)
{
    for (int i = 0; i < n; i++) {
        size_t len = strlen(s[i]) + 1;
        out[i] = *str;
        if (es_copy_to_guest(m, *str, s[i], len))
            return -1;
        *str += len;
    }
    return 0;
}

/* strings: argv[0..], envp[0..], then the file name, highest; one null
 * pointer-sized word above everything (fs/exec.c, bprm->p) */
static int push_strings(es_machine *m, init_stack *st, uint64_t top, char *const argv[],
                        char *const envp[])
{
    const char *execfn = st->execfn ? st->execfn : st->argc > 0 && argv[0] ? argv[0] : "";
    uint64_t fnbytes = strlen(execfn) + 1, strbytes = fnbytes;
    for (int i = 0; i < st->argc; i++)
        strbytes += strlen(argv[i]) + 1;
    for (int i = 0; i < st->envc; i++)
        strbytes += strlen(envp[i]) + 1;
    if (strbytes + (uint64_t)(st->argc + st->envc) * st->ps > MAX_ARGS_BYTES)
        return es_fail_msg(m, "argument list too long");

    st->fn_addr = top - st->ps - fnbytes;
    if (es_copy_to_guest(m, st->fn_addr, execfn, fnbytes))
        return oom_stack(m);
    uint64_t str = st->fn_addr - (strbytes - fnbytes);
    st->sp = str;
    st->argp = calloc((size_t)st->argc + 1, sizeof *st->argp);
    st->envp = calloc((size_t)st->envc + 1, sizeof *st->envp);
    if (!st->argp || !st->envp)
        return es_fail_msg(m, "out of host memory");
    if (copy_strings(m, &str, st->argc, argv, st->argp) ||
        copy_strings(m, &str, st->envc, envp, st->envp))
        return oom_stack(m);
    return 0;
}

/* create_elf_tables: platform string, 16 random bytes, then the
 * vectors, 16-byte aligned (arch_align_stack without randomisation) */
static int push_platform_random(es_machine *m, init_stack *st, int abi)
{
    st->sp &= ~15ull;
    const char *platform = abi == ES_ABI_I386 ? "i686" : "x86_64";
    st->sp -= strlen(platform) + 1;
    st->plat_addr = st->sp;
    if (es_copy_to_guest(m, st->plat_addr, platform, strlen(platform) + 1))
        return oom_stack(m);
    uint8_t rnd[16];
    random16(m, rnd);
    st->sp -= 16;
    st->rnd_addr = st->sp;
    if (es_copy_to_guest(m, st->rnd_addr, rnd, 16))
        return oom_stack(m);
    return 0;
}

#define NAUX 21

/* Fills aux (NAUX pairs at most) and returns how many it holds. */
static size_t fill_auxv(es_machine *m, const es_image *img, const init_stack *st,
                        uint64_t aux[NAUX][2])
{
    /* An i386 process under the modeled kernel gets the 32-bit vDSO's
     * __kernel_vsyscall as AT_SYSINFO (ARCH_DLINFO_IA32 puts it first), so
     * its libc enters by SYSENTER (Intel) or 32-bit SYSCALL (AMD) as on
     * Linux; without a kernel (--direct) or for other ABIs the entry is
     * skipped and the program uses int $0x80. */
    uint64_t vdso = img->abi == ES_ABI_I386 ? es_kernel_vdso32(m) : 0;
    const uint64_t all[NAUX][2] = {
        {AT_SYSINFO, vdso + ES_VDSO32_KERNEL_VSYSCALL},
        {AT_MINSIGSTKSZ, minsigstksz(img->abi)},
        {AT_HWCAP, hwcap(m)},
        {AT_PAGESZ, PAGE},
        {AT_CLKTCK, 100},
        {AT_PHDR, img->phdr},
        {AT_PHENT, img->phent},
        {AT_PHNUM, img->phnum},
        {AT_BASE, 0}, /* no interpreter */
        {AT_FLAGS, 0},
        {AT_ENTRY, img->entry},
        {AT_UID, getuid()},
        {AT_EUID, geteuid()},
        {AT_GID, getgid()},
        {AT_EGID, getegid()},
        {AT_SECURE, 0},
        {AT_RANDOM, st->rnd_addr},
        {AT_HWCAP2, 0},
        {AT_EXECFN, st->fn_addr},
        {AT_PLATFORM, st->plat_addr},
        {AT_NULL, 0},
    };
    size_t aux0 = vdso ? 0 : 1;
    memcpy(aux, all + aux0, (NAUX - aux0) * sizeof all[0]);
    return NAUX - aux0;
}

/* argc, argv[], NULL, envp[], NULL, auxv, as one block at the final sp
 * (STACK_ROUND: 16-byte aligned). */
static int push_vectors(es_machine *m, init_stack *st, const uint64_t aux[][2], size_t naux)
{
    const int ps = st->ps;
    size_t words = 1 + (size_t)st->argc + 1 + (size_t)st->envc + 1 + 2 * naux;
    st->sp = (st->sp - words * ps) & ~15ull;
    uint8_t *vec = calloc(words, (size_t)ps);
    if (!vec)
        return oom_stack(m);
    size_t w = 0;
#define PUT(v)                                                                                     \
    do {                                                                                           \
        uint64_t x_ = (v);                                                                         \
        memcpy(vec + w++ * ps, &x_, (size_t)ps);                                                   \
    } while (0)
    PUT((uint64_t)st->argc);
    for (int i = 0; i < st->argc; i++)
        PUT(st->argp[i]);
    PUT(0);
    for (int i = 0; i < st->envc; i++)
        PUT(st->envp[i]);
    PUT(0);
    for (size_t i = 0; i < naux; i++) {
        PUT(aux[i][0]);
        PUT(aux[i][1]);
    }
#undef PUT
    int bad = es_copy_to_guest(m, st->sp, vec, words * ps);
    free(vec);
    return bad ? oom_stack(m) : 0;
}

/* start_thread / compat_start_thread: everything zero but RSP, RIP and
 * RFLAGS (IF and the reserved bit); RDX = 0 is the "no atexit function" of
 * the ELF ABI */
void es_start_thread(es_machine *m, const es_image *img, uint64_t sp)
{
    memset(m->gpr, 0, sizeof m->gpr);
    memset(m->xmm, 0, sizeof m->xmm);
    memset(m->ymmh, 0, sizeof m->ymmh);
    m->gpr[ES_RSP] = sp;
    m->rip = img->entry;
    m->nrip = img->entry;
    m->rflags = 0x202;
    m->mxcsr = 0x1f80;
    m->fpu.fcw = 0x37f;
    m->fpu.fsw = 0;
    m->fpu.ftw = 0xffff;
    m->fpu.top = 0;
    bool compat = img->abi == ES_ABI_I386;
    set_seg(m, ES_SEG_CS, compat ? 0x23 : 0x33);
    set_seg(m, ES_SEG_SS, 0x2b);
    set_seg(m, ES_SEG_DS, compat ? 0x2b : 0);
    set_seg(m, ES_SEG_ES, compat ? 0x2b : 0);
    set_seg(m, ES_SEG_FS, 0);
    set_seg(m, ES_SEG_GS, 0);
    es_set_mode(m, 3, compat ? ES_MODE_32 : ES_MODE_64);
    es_tlb_flush(m);
}

int es_build_stack(es_machine *m, const es_image *img, int argc, char *const argv[],
                   char *const envp[], const char *execfn, uint64_t *sp)
{
    uint64_t top = img->stack_top ? img->stack_top : img->abi == ES_ABI_X64 ? TOP_64 : TOP_32;
    if (es_vm_prot_at(m, top - 1) < 0 &&
        es_vm_map(m, top - STACK_SIZE, STACK_SIZE, ES_PROT_R | ES_PROT_W))
        return es_fail_msg(m, "cannot map the stack");
    init_stack st = {
        .ps = img->abi == ES_ABI_X64 ? 8 : 4, .argc = argc < 0 ? 0 : argc, .execfn = execfn};
    while (envp && envp[st.envc])
        st.envc++;
    uint64_t aux[NAUX][2];
    int rc = push_strings(m, &st, top, argv, envp);
    if (!rc)
        rc = push_platform_random(m, &st, img->abi);
    if (!rc)
        rc = push_vectors(m, &st, aux, fill_auxv(m, img, &st, aux));
    free(st.argp);
    free(st.envp);
    *sp = st.sp;
    return rc ? -1 : 0;
}

int es_start_process(es_machine *m, const es_image *img, int argc, char *const argv[],
                     char *const envp[])
{
    uint64_t sp = 0;
    if (es_build_stack(m, img, argc, argv, envp, NULL, &sp))
        return -1;
    es_start_thread(m, img, sp);
    /* machines built by unit tests may have no host services */
    if (m->host)
        es_host_set_brk(m, img->brk_start);
    return 0;
}
