/* mm.c - the guest's memory system calls (brk, mmap, munmap, mprotect,
 * mremap, madvise) over the VMAs of sim/vm.h.
 *
 * File mappings are VMAs with a file (es_vm_file, a dup of the host fd):
 * each page is read from the file when first touched, as a page-cache page
 * would be, so bytes past EOF in the last page read as zero, a page wholly
 * past EOF is SIGBUS, and MADV_DONTNEED makes a private mapping show the
 * file again.  A page once read is the process's own copy: later changes
 * to the file do not reach it.  MAP_SHARED of a file is accepted read-only
 * (PROT_WRITE -> -EINVAL): without writers it behaves as Linux's; a
 * writable shared file mapping would need write-back, which we do not
 * model.  Shared anonymous memory is private memory (one process).
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "host_int.h"
#include "mem.h"
#include "vm.h"

#define PAGE 4096ull
#define PAGE_UP(x) (((x) + PAGE - 1) & ~(PAGE - 1))

#define G_PROT_READ 1
#define G_PROT_WRITE 2
#define G_PROT_EXEC 4
#define G_PROT_GROWSDOWN 0x01000000
#define G_PROT_GROWSUP 0x02000000
#define G_MAP_SHARED 0x01
#define G_MAP_PRIVATE 0x02
#define G_MAP_SHARED_VALIDATE 0x03
#define G_MAP_TYPE 0x0f
#define G_MAP_FIXED 0x10
#define G_MAP_ANONYMOUS 0x20
#define G_MAP_32BIT 0x40
#define G_MAP_FIXED_NOREPLACE 0x100000
#define G_MREMAP_MAYMOVE 1
#define G_MREMAP_FIXED 2
#define G_MADV_DONTNEED 4

static int es_prot(uint64_t p)
{
    return (p & G_PROT_READ ? ES_PROT_R : 0) | (p & G_PROT_WRITE ? ES_PROT_W : 0) |
           (p & G_PROT_EXEC ? ES_PROT_X : 0);
}

static bool range_free(es_machine *m, uint64_t va, uint64_t len)
{
    /* find_free takes a free hint as it is: one VMA lookup */
    if (va >= ES_VM_MMAP_MIN && es_vm_find_free(m, len, va) == va)
        return true;
    if (len > (64ull << 20))
        return false; /* the hint was refused: something is in the way (or past the top) */
    for (uint64_t a = va; a < va + len; a += PAGE)
        if (es_vm_prot_at(m, a) >= 0)
            return false;
    return true;
}

/* ---- brk (mm/mmap.c: SYSCALL_DEFINE1(brk)) ---- */

static int64_t do_brk(es_machine *m, uint64_t want, uint64_t top)
{
    struct es_host *h = m->host;
    /* any request that cannot be met leaves the break as it was; one past
     * the top would wrap its page round-up to 0 and read as a shrink */
    if (want < h->brk_start || !h->brk_start || want > top)
        return (int64_t)h->brk_cur;
    uint64_t newp = PAGE_UP(want), oldp = PAGE_UP(h->brk_cur);
    if (newp == oldp) {
        h->brk_cur = want;
        return (int64_t)want;
    }
    if (newp < oldp) {
        if (es_vm_unmap(m, newp, oldp - newp) == 0)
            h->brk_cur = want;
        return (int64_t)h->brk_cur;
    }
    /* growing: refuse to run into an existing mapping (plus Linux's
     * one-page guard gap), leaving the break where it was */
    if (newp + PAGE < newp || !range_free(m, oldp, newp - oldp + PAGE))
        return (int64_t)h->brk_cur;
    if (es_vm_map(m, oldp, newp - oldp, ES_PROT_R | ES_PROT_W))
        return (int64_t)h->brk_cur;
    h->brk_cur = want;
    return (int64_t)want;
}

/* ---- mmap ---- */

/* The file behind file mappings: its own dup of a host fd, shared by
 * every mapping of the same inode (a program that maps one file a
 * thousand times holds one host fd). */
typedef struct mapfile {
    es_vm_file vf; /* first: vm.c hands back &vf */
    int fd;
} mapfile;

static int mapfile_read(es_vm_file *vf, uint64_t off, uint8_t *page)
{
    const mapfile *f = (const mapfile *)vf;
    size_t got = 0;
    while (got < PAGE) {
        ssize_t n = pread(f->fd, page + got, PAGE - got, (off_t)(off + got));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1; /* an I/O error is SIGBUS too (VM_FAULT_SIGBUS) */
        if (n == 0)
            break;
        got += (size_t)n;
    }
    return got ? 0 : -1; /* nothing at off: the page is past EOF */
}

static void mapfile_release(es_vm_file *vf)
{
    mapfile *f = (mapfile *)vf;
    close(f->fd);
    free(f);
}

/* The es_vm_file for host fd hfd: the one mappings of its inode use
 * already, or a new one; -ENODEV for what cannot be mapped (pipes,
 * sockets, directories, ttys: no mmap in Linux either). */
static int map_file_of(es_machine *m, int hfd, es_vm_file **out)
{
    struct stat st;
    if (fstat(hfd, &st))
        return -errno;
    uint8_t probe;
    if (S_ISDIR(st.st_mode) || S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode) ||
        (S_ISCHR(st.st_mode) && pread(hfd, &probe, 1, 0) < 0))
        return -ENODEV;
    *out = es_vm_file_find(m, (uint64_t)st.st_dev, (uint64_t)st.st_ino);
    if (*out)
        return 0;
    mapfile *f = calloc(1, sizeof *f);
    if (!f)
        return -ENOMEM;
    f->fd = fcntl(hfd, F_DUPFD_CLOEXEC, 3);
    if (f->fd < 0) {
        int e = errno;
        free(f);
        return -e;
    }
    f->vf = (es_vm_file){.key = {(uint64_t)st.st_dev, (uint64_t)st.st_ino},
                         .read_page = mapfile_read, .release = mapfile_release};
    *out = &f->vf;
    return 0;
}

/* The host fd behind guest fd for a file mapping of plen bytes at off,
 * or mmap's error for it. */
static int map_fd(es_machine *m, int64_t fd, uint64_t prot, bool shared, uint64_t off,
                  uint64_t plen)
{
    int hfd = es_hs_hostfd(m, (int)fd);
    if (hfd < 0)
        return -EBADF;
    int fl = fcntl(hfd, F_GETFL);
    if (fl < 0 || (fl & O_PATH))
        return -EBADF;
    if ((fl & O_ACCMODE) == O_WRONLY)
        return -EACCES;
    if (shared && (prot & G_PROT_WRITE))
        return -EINVAL; /* writable shared file mappings: not modelled */
    if (off + plen < off)
        return -EOVERFLOW;
    return hfd;
}

static int64_t do_mmap(es_machine *m, const es_scall *c, uint64_t addr, uint64_t len,
                       uint64_t prot, uint64_t flags, int64_t fd, uint64_t off)
{
    uint64_t top = es_hs_task_size(c);
    if (!len)
        return -EINVAL;
    if (off & (PAGE - 1))
        return -EINVAL;
    if (prot & ~(uint64_t)(G_PROT_READ | G_PROT_WRITE | G_PROT_EXEC | G_PROT_GROWSDOWN | G_PROT_GROWSUP))
        return -EINVAL;
    uint64_t type = flags & G_MAP_TYPE;
    if (type != G_MAP_SHARED && type != G_MAP_PRIVATE && type != G_MAP_SHARED_VALIDATE)
        return -EINVAL;
    uint64_t plen = PAGE_UP(len);
    if (!plen || plen > top)
        return -ENOMEM;
    bool anon = flags & G_MAP_ANONYMOUS;
    int hfd = anon ? -1 : map_fd(m, fd, prot, type != G_MAP_PRIVATE, off, plen);
    if (hfd < 0 && !anon)
        return hfd;
    uint64_t va;
    if (flags & (G_MAP_FIXED | G_MAP_FIXED_NOREPLACE)) {
        if (addr & (PAGE - 1))
            return -EINVAL;
        if (addr > top - plen)
            return -ENOMEM;
        if (addr < ES_VM_MMAP_MIN) /* mmap_min_addr */
            return -EPERM;
        if ((flags & G_MAP_FIXED_NOREPLACE) && !(flags & G_MAP_FIXED) && !range_free(m, addr, plen))
            return -EEXIST;
        va = addr;
    } else {
        uint64_t hint = addr & ~(PAGE - 1);
        if (hint && hint > top - plen)
            hint = 0;
        if ((flags & G_MAP_32BIT) && !c->ptr32) {
            /* MAP_32BIT: within the first 2 GiB; the hint only if it is
             * there, else the highest free place below 2 GiB, found 1 MiB at
             * a time (a VMA lookup each) */
            const uint64_t lim = 0x80000000ull;
            if (plen > lim - ES_VM_MMAP_MIN)
                return -ENOMEM;
            va = hint && hint + plen <= lim ? es_vm_find_free(m, plen, hint) : 0;
            if (va != hint || !hint) {
                va = 0;
                for (uint64_t h = (lim - plen) & ~0xfffffull; h >= ES_VM_MMAP_MIN; h -= 0x100000) {
                    if (es_vm_find_free(m, plen, h) == h) {
                        va = h;
                        break;
                    }
                    if (h < 0x100000)
                        break;
                }
                if (!va)
                    return -ENOMEM;
            }
        } else {
            va = es_vm_find_free(m, plen, hint);
            if (!va || va > top - plen)
                return -ENOMEM;
        }
    }
    es_vm_file *file = NULL;
    if (!anon) {
        int r = map_file_of(m, hfd, &file);
        if (r)
            return r;
    }
    int r = es_vm_map_file(m, va, plen, es_prot(prot), file, off);
    return r ? r : (int64_t)va;
}

/* i386 #90: struct mmap_arg_struct32 {addr, len, prot, flags, fd, offset}. */
static int64_t do_old_mmap(es_machine *m, const es_scall *c, uint64_t uarg)
{
    uint8_t b[24];
    int r = es_hs_get(m, c, b, uarg, sizeof b);
    if (r)
        return r;
    uint32_t v[6];
    for (int i = 0; i < 6; i++)
        v[i] = es_ld32(b + 4 * i);
    if (v[5] & (PAGE - 1))
        return -EINVAL;
    return do_mmap(m, c, v[0], v[1], v[2], v[3], (int32_t)v[4], v[5]);
}

/* ---- mremap ---- */

static int64_t do_mremap(es_machine *m, const es_scall *c, uint64_t old, uint64_t oldlen,
                         uint64_t newlen, uint64_t flags, uint64_t newaddr)
{
    uint64_t top = es_hs_task_size(c);
    if (flags & ~(uint64_t)(G_MREMAP_MAYMOVE | G_MREMAP_FIXED))
        return -EINVAL;
    if ((flags & G_MREMAP_FIXED) && !(flags & G_MREMAP_MAYMOVE))
        return -EINVAL;
    if (old & (PAGE - 1))
        return -EINVAL;
    oldlen = PAGE_UP(oldlen);
    newlen = PAGE_UP(newlen);
    if (!newlen || !oldlen) /* oldlen 0 duplicates shared mappings only */
        return -EINVAL;
    if (old > top || oldlen > top - old || newlen > top)
        return -EINVAL;
    int prot = es_vm_prot_at(m, old);
    if (prot < 0 || !es_vm_range_ok(m, old, oldlen, 0))
        return -EFAULT;
    if (flags & G_MREMAP_FIXED) {
        if ((newaddr & (PAGE - 1)) || newaddr > top - newlen)
            return -EINVAL;
        if (newaddr < old + oldlen && old < newaddr + newlen)
            return -EINVAL; /* overlapping */
    } else {
        if (newlen <= oldlen) {
            if (newlen < oldlen)
                es_vm_unmap(m, old + newlen, oldlen - newlen);
            return (int64_t)old;
        }
        if (old + newlen <= top && range_free(m, old + oldlen, newlen - oldlen)) {
            /* a file mapping grows into the file's next pages */
            uint64_t off = 0;
            es_vm_file *f = es_vm_file_at(m, old, &off);
            int r = es_vm_map_file(m, old + oldlen, newlen - oldlen, prot, f, off + oldlen);
            return r ? r : (int64_t)old;
        }
        if (!(flags & G_MREMAP_MAYMOVE))
            return -ENOMEM;
        newaddr = es_vm_find_free(m, newlen, 0);
        if (!newaddr || newaddr > top - newlen)
            return -ENOMEM;
    }
    int r = es_vm_move(m, old, oldlen, newaddr, newlen);
    return r ? r : (int64_t)newaddr;
}

/* MADV_DONTNEED on private memory: the pages read as zero afterwards, or
 * as the file again in a file mapping (mm/madvise.c zaps the private
 * copies; the next fault reads the page cache). */
static int64_t do_madvise(es_machine *m, const es_scall *c, uint64_t start, uint64_t len_in, int adv)
{
    if (start & (PAGE - 1))
        return -EINVAL;
    uint64_t len = PAGE_UP(len_in);
    if (len_in && !len) /* mm/madvise.c: the round-up wrapped */
        return -EINVAL;
    if (start + len < start || start + len > es_hs_task_size(c))
        return -EINVAL;
    if (adv != G_MADV_DONTNEED)
        return 0; /* advice only */
    /* frees only the pages present: a 16 TiB range costs its tables */
    return es_vm_zap(m, start, len);
}

/* ---- services ---- */

ES_SYS(brk) { return do_brk(m, a[0], es_hs_task_size(c)); }
ES_SYS(mmap) { return do_mmap(m, c, a[0], a[1], a[2], a[3], (int)a[4], a[5]); }
ES_SYS(old_mmap) { return do_old_mmap(m, c, a[0]); }

/* offset in 4 KiB units; 32-bit registers give files up to 16 TiB */
ES_SYS(mmap2) { return do_mmap(m, c, a[0], a[1], a[2], a[3], (int32_t)a[4], a[5] << 12); }

ES_SYS(munmap)
{
    if ((a[0] & (PAGE - 1)) || !a[1])
        return -EINVAL;
    uint64_t len = PAGE_UP(a[1]);
    if (!len || a[0] > es_hs_task_size(c) || len > es_hs_task_size(c) - a[0])
        return -EINVAL;
    return es_vm_unmap(m, a[0], len);
}

ES_SYS(mprotect)
{
    if (a[2] & ~(uint64_t)(G_PROT_READ | G_PROT_WRITE | G_PROT_EXEC | G_PROT_GROWSDOWN | G_PROT_GROWSUP))
        return -EINVAL;
    if (a[0] & (PAGE - 1))
        return -EINVAL;
    uint64_t len = PAGE_UP(a[1]);
    if (a[1] && !len)
        return -ENOMEM;
    return es_vm_protect(m, a[0], len, es_prot(a[2]));
}

ES_SYS(mremap) { return do_mremap(m, c, a[0], a[1], a[2], a[3], a[4]); }
ES_SYS(madvise) { return do_madvise(m, c, a[0], a[1], (int)a[2]); }

/* msync and the mlock family: private memory, never swapped */
ES_SYS(mm_advice) { return 0; }
