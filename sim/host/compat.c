/* compat.c - the guest's struct layouts, per ABI.
 *
 * x86-64 and x32 share the 64-bit layouts (x32's __kernel_long_t is 64
 * bits), except the x32 rows 512+ which take compat structs with 32-bit
 * pointers (iovec, sigaction...).  i386 takes the compat layouts of
 * arch/x86/include/asm/compat.h and the packed struct stat64 of
 * arch/x86/include/uapi/asm/stat.h.  Everything is assembled byte by byte
 * at explicit offsets, so nothing depends on the host compiler's layout.
 */
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "host_int.h"

/* new_encode_dev (include/linux/kdev_t.h): what stat returns as st_dev. */
static uint64_t enc_dev(dev_t d)
{
    uint32_t ma = major(d), mi = minor(d);
    return (mi & 0xff) | (ma << 8) | ((uint64_t)(mi & ~0xffu) << 12);
}

static uint16_t low16id(uint32_t id)
{
    return id & ~0xffffu ? 65534 : (uint16_t)id; /* high2lowuid: overflowuid */
}

int es_hs_conv_stat(const struct stat *st, int kind, uint8_t *o)
{
    switch (kind) {
    case 0: /* x86-64 struct stat, 144 bytes */
        memset(o, 0, 144);
        es_st64(o + 0, enc_dev(st->st_dev));
        es_st64(o + 8, st->st_ino);
        es_st64(o + 16, st->st_nlink);
        es_st32(o + 24, st->st_mode);
        es_st32(o + 28, st->st_uid);
        es_st32(o + 32, st->st_gid);
        es_st64(o + 40, enc_dev(st->st_rdev));
        es_st64(o + 48, (uint64_t)st->st_size);
        es_st64(o + 56, (uint64_t)st->st_blksize);
        es_st64(o + 64, (uint64_t)st->st_blocks);
        es_st64(o + 72, (uint64_t)st->st_atim.tv_sec);
        es_st64(o + 80, (uint64_t)st->st_atim.tv_nsec);
        es_st64(o + 88, (uint64_t)st->st_mtim.tv_sec);
        es_st64(o + 96, (uint64_t)st->st_mtim.tv_nsec);
        es_st64(o + 104, (uint64_t)st->st_ctim.tv_sec);
        es_st64(o + 112, (uint64_t)st->st_ctim.tv_nsec);
        return 144;
    case 1: /* i386 struct stat64, 96 bytes, packed (cp_stat64) */
        memset(o, 0, 96);
        es_st64(o + 0, enc_dev(st->st_dev));
        es_st32(o + 12, (uint32_t)st->st_ino); /* __st_ino */
        es_st32(o + 16, st->st_mode);
        es_st32(o + 20, (uint32_t)st->st_nlink);
        es_st32(o + 24, st->st_uid);
        es_st32(o + 28, st->st_gid);
        es_st64(o + 32, enc_dev(st->st_rdev));
        es_st64(o + 44, (uint64_t)st->st_size);
        es_st32(o + 52, (uint32_t)st->st_blksize);
        es_st64(o + 56, (uint64_t)st->st_blocks);
        es_st32(o + 64, (uint32_t)st->st_atim.tv_sec);
        es_st32(o + 68, (uint32_t)st->st_atim.tv_nsec);
        es_st32(o + 72, (uint32_t)st->st_mtim.tv_sec);
        es_st32(o + 76, (uint32_t)st->st_mtim.tv_nsec);
        es_st32(o + 80, (uint32_t)st->st_ctim.tv_sec);
        es_st32(o + 84, (uint32_t)st->st_ctim.tv_nsec);
        es_st64(o + 88, st->st_ino);
        return 96;
    case 2: { /* i386 struct stat = compat_stat, 64 bytes (cp_compat_stat) */
        uint32_t dma = major(st->st_dev), dmi = minor(st->st_dev);
        uint32_t rma = major(st->st_rdev), rmi = minor(st->st_rdev);
        /* old_valid_dev: 8-bit major and minor */
        if (dma > 255 || dmi > 255 || rma > 255 || rmi > 255)
            return -EOVERFLOW;
        if ((uint32_t)st->st_ino != st->st_ino || st->st_nlink > 0xffff ||
            st->st_size > 0x7fffffff)
            return -EOVERFLOW;
        memset(o, 0, 64);
        es_st16(o + 0, (uint16_t)(dma << 8 | dmi));
        es_st32(o + 4, (uint32_t)st->st_ino);
        es_st16(o + 8, (uint16_t)st->st_mode);
        es_st16(o + 10, (uint16_t)st->st_nlink);
        es_st16(o + 12, low16id(st->st_uid));
        es_st16(o + 14, low16id(st->st_gid));
        es_st16(o + 16, (uint16_t)(rma << 8 | rmi));
        es_st32(o + 20, (uint32_t)st->st_size);
        es_st32(o + 24, (uint32_t)st->st_blksize);
        es_st32(o + 28, (uint32_t)st->st_blocks);
        es_st32(o + 32, (uint32_t)st->st_atim.tv_sec);
        es_st32(o + 36, (uint32_t)st->st_atim.tv_nsec);
        es_st32(o + 40, (uint32_t)st->st_mtim.tv_sec);
        es_st32(o + 44, (uint32_t)st->st_mtim.tv_nsec);
        es_st32(o + 48, (uint32_t)st->st_ctim.tv_sec);
        es_st32(o + 52, (uint32_t)st->st_ctim.tv_nsec);
        return 64;
    }
    case 3: { /* i386 struct __old_kernel_stat, 32 bytes (cp_old_stat) */
        if ((uint16_t)st->st_ino != st->st_ino || st->st_nlink > 0xffff ||
            st->st_size > 0x7fffffff)
            return -EOVERFLOW;
        memset(o, 0, 32);
        /* old_encode_dev: 8-bit major and minor (larger ones are mangled) */
        es_st16(o + 0, (uint16_t)((major(st->st_dev) & 0xff) << 8 | (minor(st->st_dev) & 0xff)));
        es_st16(o + 2, (uint16_t)st->st_ino);
        es_st16(o + 4, (uint16_t)st->st_mode);
        es_st16(o + 6, (uint16_t)st->st_nlink);
        es_st16(o + 8, low16id(st->st_uid));
        es_st16(o + 10, low16id(st->st_gid));
        es_st16(o + 12, (uint16_t)((major(st->st_rdev) & 0xff) << 8 | (minor(st->st_rdev) & 0xff)));
        es_st32(o + 16, (uint32_t)st->st_size);
        es_st32(o + 20, (uint32_t)st->st_atim.tv_sec);
        es_st32(o + 24, (uint32_t)st->st_mtim.tv_sec);
        es_st32(o + 28, (uint32_t)st->st_ctim.tv_sec);
        return 32;
    }
    default:
        return -EINVAL;
    }
}

/* i386 uses compat_timespec {s32, s32}; x86-64 and x32 {s64, s64}. */
int es_hs_get_timespec(es_machine *m, const es_scall *c, uint64_t va, int64_t *sec, int64_t *nsec)
{
    uint8_t b[16];
    bool c32 = c->abi == ES_ABI_I386;
    int r = es_hs_get(m, c, b, va, c32 ? 8 : 16);
    if (r)
        return r;
    if (c32) {
        *sec = (int32_t)es_ld32(b);
        *nsec = (int32_t)es_ld32(b + 4);
    } else {
        *sec = (int64_t)es_ld64(b);
        *nsec = (int64_t)es_ld64(b + 8);
    }
    return 0;
}

int es_hs_put_timespec(es_machine *m, const es_scall *c, uint64_t va, int64_t sec, int64_t nsec)
{
    uint8_t b[16];
    if (c->abi == ES_ABI_I386) {
        es_st32(b, (uint32_t)sec);
        es_st32(b + 4, (uint32_t)nsec);
        return es_hs_put(m, c, va, b, 8);
    }
    es_st64(b, (uint64_t)sec);
    es_st64(b + 8, (uint64_t)nsec);
    return es_hs_put(m, c, va, b, 16);
}

int es_hs_put_timeval(es_machine *m, const es_scall *c, uint64_t va, int64_t sec, int64_t usec)
{
    return es_hs_put_timespec(m, c, va, sec, usec); /* same shapes */
}

int es_hs_get_iovec(es_machine *m, const es_scall *c, uint64_t va, uint64_t cnt, es_iov *out)
{
    if (cnt > 1024)
        return -EINVAL;
    size_t esz = c->compat ? 8 : 16; /* struct compat_iovec {u32 base; u32 len} */
    uint8_t b[1024 * 16];
    int r = es_hs_get(m, c, b, va, cnt * esz);
    if (r)
        return r;
    for (uint64_t i = 0; i < cnt; i++) {
        if (c->compat) {
            out[i].base = es_ld32(b + i * 8);
            out[i].len = es_ld32(b + i * 8 + 4);
            if ((int32_t)out[i].len < 0) /* compat_ssize_t */
                return -EINVAL;
        } else {
            out[i].base = es_ld64(b + i * 16);
            out[i].len = es_ld64(b + i * 16 + 8);
            if ((int64_t)out[i].len < 0)
                return -EINVAL;
        }
    }
    return 0;
}

/* struct sigaction as the kernel takes it: 64-bit {handler, flags,
 * restorer, mask} (32 bytes); compat {u32 handler, u32 flags, u32
 * restorer, u32 mask[2]} (20 bytes). */
int es_hs_get_sigaction(es_machine *m, const es_scall *c, uint64_t va, es_ksigaction *sa)
{
    uint8_t b[32];
    int r = es_hs_get(m, c, b, va, c->compat ? 20 : 32);
    if (r)
        return r;
    if (c->compat) {
        sa->handler = es_ld32(b);
        sa->flags = es_ld32(b + 4);
        sa->restorer = es_ld32(b + 8);
        sa->mask = es_ld64(b + 12);
    } else {
        sa->handler = es_ld64(b);
        sa->flags = es_ld64(b + 8);
        sa->restorer = es_ld64(b + 16);
        sa->mask = es_ld64(b + 24);
    }
    return 0;
}

int es_hs_put_sigaction(es_machine *m, const es_scall *c, uint64_t va, const es_ksigaction *sa)
{
    uint8_t b[32];
    if (c->compat) {
        es_st32(b, (uint32_t)sa->handler);
        es_st32(b + 4, (uint32_t)sa->flags);
        es_st32(b + 8, (uint32_t)sa->restorer);
        es_st64(b + 12, sa->mask);
        return es_hs_put(m, c, va, b, 20);
    }
    es_st64(b, sa->handler);
    es_st64(b + 8, sa->flags);
    es_st64(b + 16, sa->restorer);
    es_st64(b + 24, sa->mask);
    return es_hs_put(m, c, va, b, 32);
}
