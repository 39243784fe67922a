/* kimage.c - a guest kernel image checked and parsed (kimage.h): the ELF
 * and program headers, every field checked against the image size before
 * use, so a malformed image gets a one-line reason in m->message, never a
 * host crash; and the symbol table, sorted by address and by name.
 *
 * Parsing is apart from loading (kernel.c) so that machines loading the
 * same image one after another can share one parse: the two sorts of the
 * symbols were a quarter of the set-up of an exposure case.
 */
#include "kimage.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fault.h"
#include "kernel.h"
#include "kernel_int.h"

#define MAX_IMAGE_SPAN (32ull << 20) /* the real image is ~100 KiB */

#define PT_LOAD 1

/* The ELF header: a little-endian ELF64 x86-64 executable whose program
 * headers lie inside the file. */
static int check_ehdr(es_machine *m, const uint8_t *data, size_t size)
{
    if (!data || size < 64)
        return es_fail_msg(m, "kernel image too small to be an ELF file (%zu bytes)", size);
    if (memcmp(data, "\177ELF", 4) != 0)
        return es_fail_msg(m, "kernel image is not an ELF file");
    if (data[4] != 2 || data[5] != 1)
        return es_fail_msg(m, "kernel image is not a little-endian ELF64 file");
    if (kimg_rd(data + 16, 2) != 2 /* ET_EXEC */)
        return es_fail_msg(m, "kernel image is not an executable (ET_EXEC)");
    if (kimg_rd(data + 18, 2) != 62 /* EM_X86_64 */)
        return es_fail_msg(m, "kernel image is not for x86-64");
    uint64_t phoff = kimg_rd(data + 32, 8);
    uint16_t phentsize = (uint16_t)kimg_rd(data + 54, 2), phnum = (uint16_t)kimg_rd(data + 56, 2);
    if (phentsize != 56)
        return es_fail_msg(m, "kernel image: program header size %u, expected 56", phentsize);
    if (phnum == 0 || phnum > MAX_PHNUM)
        return es_fail_msg(m, "kernel image: %u program headers", phnum);
    if (phoff > size || (uint64_t)phnum * 56 > size - phoff)
        return es_fail_msg(m, "kernel image: program headers extend past the end (truncated?)");
    return 0;
}

/* One PT_LOAD header checked: inside the file, inside the kernel half. */
static int check_load(es_machine *m, const kphdr *h, unsigned i, size_t size)
{
    if (h->filesz > h->memsz)
        return es_fail_msg(m, "kernel image: segment %u: file size exceeds memory size", i);
    if (h->offset > size || h->filesz > size - h->offset)
        return es_fail_msg(m, "kernel image: segment %u extends past the end (truncated?)", i);
    if (h->vaddr < KERNEL_LO || h->memsz > MAX_IMAGE_SPAN ||
        h->vaddr + h->memsz > ES_VSYSCALL_ADDR || h->vaddr + h->memsz < h->vaddr)
        return es_fail_msg(m, "kernel image: segment %u at 0x%llx is outside the kernel half",
                           i, (unsigned long long)h->vaddr);
    return 0;
}

/* Reads the program headers (check_ehdr passed) into *l. */
static int read_phdrs(es_machine *m, const uint8_t *data, size_t size, klayout *l)
{
    uint64_t phoff = kimg_rd(data + 32, 8);
    l->phnum = (unsigned)kimg_rd(data + 56, 2);
    l->lo = ~0ull;
    l->hi = l->pages = 0;
    unsigned nload = 0;
    for (unsigned i = 0; i < l->phnum; i++) {
        const uint8_t *p = data + phoff + (uint64_t)i * 56;
        kphdr *h = &l->ph[i];
        h->type = (uint32_t)kimg_rd(p, 4);
        h->flags = (uint32_t)kimg_rd(p + 4, 4);
        h->offset = kimg_rd(p + 8, 8);
        h->vaddr = kimg_rd(p + 16, 8);
        h->filesz = kimg_rd(p + 32, 8);
        h->memsz = kimg_rd(p + 40, 8);
        if (h->type != PT_LOAD || h->memsz == 0)
            continue;
        if (check_load(m, h, i, size))
            return -1;
        if (h->vaddr < l->lo)
            l->lo = h->vaddr;
        if (h->vaddr + h->memsz > l->hi)
            l->hi = h->vaddr + h->memsz;
        l->pages += (PAGE_ALIGN(h->vaddr + h->memsz) - PAGE_START(h->vaddr)) / PAGE;
        nload++;
    }
    if (!nload)
        return es_fail_msg(m, "kernel image has no loadable segments");
    if (l->hi - l->lo > MAX_IMAGE_SPAN)
        return es_fail_msg(m, "kernel image spans %llu MiB",
                           (unsigned long long)((l->hi - l->lo) >> 20));
    return 0;
}


int es_kimage_headers(es_machine *m, struct es_kimage *img, const uint8_t *data, size_t size)
{
    img->data = data;
    img->size = size;
    return check_ehdr(m, data, size) || read_phdrs(m, data, size, &img->layout) ? -1 : 0;
}

int es_kimage_symbols(es_machine *m, struct es_kimage *img)
{
    return es_ksyms_read(m, &img->syms, img->data, img->size, img->layout.lo, img->layout.hi);
}

void es_kimage_free(struct es_kimage *img)
{
    if (!img)
        return;
    es_ksyms_free(&img->syms);
    free(img->file);
    free(img);
}

int es_kimage_embedded(es_machine *m, unsigned patches, const uint8_t **data, size_t *size)
{
    if (patches > ES_CONV_V417)
        return es_fail_msg(m, "no such patch set 0x%x", patches);
    *data = es_kernel_image(patches, size);
    if (!*data) {
        char name[64];
        es_patches_name(patches, name, sizeof name);
        return es_fail_msg(m, "no guest kernel image for %s was built into entrysim "
                       "(kernel_model/ missing from the build?)",
                    name);
    }
    return 0;
}

int es_kimage_path(es_machine *m, const char *dir, unsigned patches, char *path, size_t pathlen)
{
    if (patches > ES_CONV_V417)
        return es_fail_msg(m, "no such patch set 0x%x", patches);
    if ((size_t)snprintf(path, pathlen, "%s/build/kernel-p%02u.elf", dir, patches) >= pathlen)
        return es_fail_msg(m, "%s: path too long", dir);
    return 0;
}

int es_kimage_read_file(es_machine *m, const char *dir, const char *path, uint8_t **out,
                        size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f && errno == ENOENT)
        return es_fail_msg(m, "%s: no such image (run 'entrysim kernel build %s' first)", path,
                           dir);
    if (!f)
        return es_fail_msg(m, "%s: %s", path, strerror(errno));
    uint8_t *buf = malloc(MAX_IMAGE_SPAN);
    size_t n = buf ? fread(buf, 1, MAX_IMAGE_SPAN, f) : 0;
    bool big = buf && n == MAX_IMAGE_SPAN && fgetc(f) != EOF, err = ferror(f);
    fclose(f);
    if (!buf)
        return es_fail_msg(m, "out of host memory");
    if (big || err) {
        free(buf);
        return es_fail_msg(m, "%s: %s", path, big ? "larger than any kernel image (32 MiB)"
                                                  : "read error");
    }
    *out = buf;
    *size = n;
    return 0;
}

