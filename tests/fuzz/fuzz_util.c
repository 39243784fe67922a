/* fuzz_util.c - see fuzz_util.h. */
#include "fuzz_util.h"

#include <elf.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "launch.h"

static char tmpdir[4096];

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
    return remove(p);
}

static void rm_tmpdir(void)
{
    if (tmpdir[0])
        nftw(tmpdir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

const char *fz_tmpdir(void)
{
    if (tmpdir[0])
        return tmpdir;
    const char *base = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/es-fuzz-XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(tmpdir)) {
        perror("fuzz: mkdtemp");
        abort();
    }
    char *abs = realpath(tmpdir, NULL);
    if (abs) {
        snprintf(tmpdir, sizeof tmpdir, "%s", abs);
        free(abs);
    }
    atexit(rm_tmpdir);
    return tmpdir;
}

/* ELF64 and ELF32 images differ only in field widths: fill the one asked
 * for, with the code right after the headers. */
static size_t build_elf(uint8_t *out, bool bits32, size_t n)
{
    if (bits32) {
        Elf32_Ehdr e = {.e_type = ET_EXEC, .e_machine = EM_386, .e_version = EV_CURRENT,
                        .e_phoff = sizeof e, .e_ehsize = sizeof e,
                        .e_phentsize = sizeof(Elf32_Phdr), .e_phnum = 1};
        memcpy(e.e_ident, ELFMAG, SELFMAG);
        e.e_ident[EI_CLASS] = ELFCLASS32;
        e.e_ident[EI_DATA] = ELFDATA2LSB;
        e.e_ident[EI_VERSION] = EV_CURRENT;
        size_t hdr = sizeof e + sizeof(Elf32_Phdr);
        e.e_entry = (uint32_t)(FZ_LOAD_VA + hdr);
        Elf32_Phdr p = {.p_type = PT_LOAD, .p_vaddr = (uint32_t)FZ_LOAD_VA,
                        .p_paddr = (uint32_t)FZ_LOAD_VA, .p_filesz = (uint32_t)(hdr + n),
                        .p_memsz = (uint32_t)(hdr + n), .p_flags = PF_R | PF_X,
                        .p_align = 0x1000};
        memcpy(out, &e, sizeof e);
        memcpy(out + sizeof e, &p, sizeof p);
        return hdr;
    }
    Elf64_Ehdr e = {.e_type = ET_EXEC, .e_machine = EM_X86_64, .e_version = EV_CURRENT,
                    .e_phoff = sizeof e, .e_ehsize = sizeof e,
                    .e_phentsize = sizeof(Elf64_Phdr), .e_phnum = 1};
    memcpy(e.e_ident, ELFMAG, SELFMAG);
    e.e_ident[EI_CLASS] = ELFCLASS64;
    e.e_ident[EI_DATA] = ELFDATA2LSB;
    e.e_ident[EI_VERSION] = EV_CURRENT;
    size_t hdr = sizeof e + sizeof(Elf64_Phdr);
    e.e_entry = FZ_LOAD_VA + hdr;
    Elf64_Phdr p = {.p_type = PT_LOAD, .p_vaddr = FZ_LOAD_VA, .p_paddr = FZ_LOAD_VA,
                    .p_filesz = hdr + n, .p_memsz = hdr + n, .p_flags = PF_R | PF_X,
                    .p_align = 0x1000};
    memcpy(out, &e, sizeof e);
    memcpy(out + sizeof e, &p, sizeof p);
    return hdr;
}

int fz_write_elf(const char *path, bool bits32, const uint8_t *code, size_t n)
{
    static uint8_t img[256 + FZ_MAX_CODE];
    if (n > FZ_MAX_CODE)
        return -1;
    size_t hdr = build_elf(img, bits32, n);
    memcpy(img + hdr, code, n);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0755);
    if (fd < 0)
        return -1;
    ssize_t w = write(fd, img, hdr + n);
    close(fd);
    return w == (ssize_t)(hdr + n) ? 0 : -1;
}

es_machine *fz_launch(const char *path, const char *root, bool rw, bool direct,
                      uint64_t max_insns)
{
    static int null_fd = -1;
    if (null_fd < 0)
        null_fd = open("/dev/null", O_RDWR);
    char *argv[] = {(char *)path, NULL};
    es_launch_cfg c = {
        .program = path, .argc = 1, .argv = argv, .root = root, .rw = rw,
        .deterministic = true, .mem_cap_mb = 64, .direct = direct,
        .max_insns = max_insns, .timeout = 5,
        .stdin_fd = null_fd, .stdout_fd = null_fd, .stderr_fd = null_fd,
    };
    es_machine *m = NULL;
    char err[512];
    if (es_launch(&c, &m, err, sizeof err) != ES_LAUNCH_OK)
        return NULL;
    return m;
}

char *fz_cstr(const uint8_t *data, size_t n, size_t cap)
{
    if (n > cap)
        n = cap;
    char *s = malloc(n + 1);
    if (!s)
        abort();
    memcpy(s, data, n);
    s[n] = 0;
    return s;
}
