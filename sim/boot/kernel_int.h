/* kernel_int.h - what the files of the guest-kernel image share
 * (kernel.c, kmem.c, ksyms.c, alternatives.c, pti.c, mitigations.c): the
 * image's bookkeeping behind m->kernel and little-endian field reads.
 * Types and inline helpers only; each file's functions are in its own
 * header. */
#ifndef ENTRYSIM_KERNEL_INT_H
#define ENTRYSIM_KERNEL_INT_H

#include <stddef.h>
#include <stdint.h>

#define PAGE 4096ull
#define PAGE_START(x) ((x) & ~(PAGE - 1))
#define PAGE_ALIGN(x) (((x) + PAGE - 1) & ~(PAGE - 1))

/* The kernel half of the address space; the image must lie in it and
 * below the vsyscall page. */
#define KERNEL_LO 0xffff800000000000ull

typedef struct ksym {
    uint64_t addr, size;
    uint32_t name; /* offset into names */
    uint8_t global, sized;
} ksym;

/* An image's symbol table (ksyms.c), sorted both ways. */
typedef struct ksymtab {
    char *names;
    size_t names_len;
    ksym *syms; /* by address; at one address the preferred first */
    size_t nsyms;
    uint32_t *by_name; /* indices into syms, by name, globals first */
} ksymtab;

#define MAX_PHNUM 64

typedef struct kphdr {
    uint32_t type, flags;
    uint64_t offset, vaddr, filesz, memsz;
} kphdr;

/* The image's PT_LOAD headers, checked against its size and the kernel
 * half, with their span and page count. */
typedef struct klayout {
    kphdr ph[MAX_PHNUM];
    unsigned phnum;
    uint64_t lo, hi, pages;
} klayout;

/* An image checked and parsed (kimage.c): all that loading it into a
 * machine needs besides copying its bytes.  Read-only once made, so the
 * machines of a batch share one (kernel.h: es_kimages). */
struct es_kimage {
    const uint8_t *data; /* the ELF file */
    size_t size;
    uint8_t *file;       /* data, when read from a file: freed with the image */
    klayout layout;
    ksymtab syms;
};

struct es_kernel {
    unsigned patches;
    int abi; /* -1: infer at boot */
    uint64_t lo, hi; /* span of the image's PT_LOAD segments */
    const ksymtab *st;     /* the image's symbols */
    struct es_kimage *own; /* the image, when no es_kimages shares it */
    uint64_t vdso32;
    /* mitigations (es_kernel_set_mitigations) */
    unsigned mit;
    uint64_t alt_lo, nalt;  /* the .altinstructions records */
    uint8_t *alt_orig;      /* each site's bytes as loaded, concatenated */
    uint64_t pti_pgd;       /* kernel PGD of the pti pair (user = +4 KiB), 0 = none */
};

/* A little-endian field of n bytes of the image (any alignment). */
static inline uint64_t kimg_rd(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

#endif
