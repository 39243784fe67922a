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

void es_hs_put_fields(uint8_t *out, const es_field *f, const uint64_t *v, int n)
{
    for (int i = 0; i < n; i++)
        for (int k = 0; k < f[i].width; k++)
            out[f[i].off + k] = (uint8_t)(v[i] >> (8 * k));
}

/* old_encode_dev: 8-bit major and minor (larger ones are mangled) */
static uint16_t old_enc_dev(dev_t d)
{
    return (uint16_t)((major(d) & 0xff) << 8 | (minor(d) & 0xff));
}

/* The fields of the four stat layouts, in the order es_hs_conv_stat fills
 * them (width 0: the layout has no such field). */
enum {
    STF_DEV, STF_INO, STF_NLINK, STF_MODE, STF_UID, STF_GID, STF_RDEV, STF_SIZE, STF_BLKSIZE, STF_BLOCKS,
    STF_ATIME, STF_ATIME_NS, STF_MTIME, STF_MTIME_NS, STF_CTIME, STF_CTIME_NS, STF_INO64, NSTF
};
static const struct stat_layout {
    uint8_t size;
    es_field f[NSTF];
} g_stat[4] = {
    /* 0: x86-64 struct stat, 144 bytes */
    {144, {{0, 8}, {8, 8}, {16, 8}, {24, 4}, {28, 4}, {32, 4}, {40, 8}, {48, 8}, {56, 8}, {64, 8},
           {72, 8}, {80, 8}, {88, 8}, {96, 8}, {104, 8}, {112, 8}, {0, 0}}},
    /* 1: i386 struct stat64, 96 bytes, packed (cp_stat64); __st_ino at
     * 12, the full st_ino at 88 */
    {96, {{0, 8}, {12, 4}, {20, 4}, {16, 4}, {24, 4}, {28, 4}, {32, 8}, {44, 8}, {52, 4}, {56, 8},
          {64, 4}, {68, 4}, {72, 4}, {76, 4}, {80, 4}, {84, 4}, {88, 8}}},
    /* 2: i386 struct stat = compat_stat, 64 bytes (cp_compat_stat) */
    {64, {{0, 2}, {4, 4}, {10, 2}, {8, 2}, {12, 2}, {14, 2}, {16, 2}, {20, 4}, {24, 4}, {28, 4},
          {32, 4}, {36, 4}, {40, 4}, {44, 4}, {48, 4}, {52, 4}, {0, 0}}},
    /* 3: i386 struct __old_kernel_stat, 32 bytes (cp_old_stat): no
     * st_blksize, st_blocks or nanoseconds */
    {32, {{0, 2}, {2, 2}, {6, 2}, {4, 2}, {8, 2}, {10, 2}, {12, 2}, {16, 4}, {0, 0}, {0, 0},
          {20, 4}, {0, 0}, {24, 4}, {0, 0}, {28, 4}, {0, 0}, {0, 0}}},
};

int es_hs_conv_stat(const struct stat *st, int kind, uint8_t *o)
{
    if (kind < 0 || kind > 3)
        return -EINVAL;
    if (kind == 2) {
        /* old_valid_dev: 8-bit major and minor */
        if (major(st->st_dev) > 255 || minor(st->st_dev) > 255 || major(st->st_rdev) > 255 ||
            minor(st->st_rdev) > 255)
            return -EOVERFLOW;
        if ((uint32_t)st->st_ino != st->st_ino || st->st_nlink > 0xffff || st->st_size > 0x7fffffff)
            return -EOVERFLOW;
    }
    if (kind == 3 && ((uint16_t)st->st_ino != st->st_ino || st->st_nlink > 0xffff ||
                      st->st_size > 0x7fffffff))
        return -EOVERFLOW;
    bool old = kind >= 2; /* 16-bit devices and ids */
    uint64_t v[NSTF] = {
        [STF_DEV] = old ? old_enc_dev(st->st_dev) : enc_dev(st->st_dev),
        [STF_INO] = st->st_ino,
        [STF_NLINK] = st->st_nlink,
        [STF_MODE] = st->st_mode,
        [STF_UID] = old ? low16id(st->st_uid) : st->st_uid,
        [STF_GID] = old ? low16id(st->st_gid) : st->st_gid,
        [STF_RDEV] = old ? old_enc_dev(st->st_rdev) : enc_dev(st->st_rdev),
        [STF_SIZE] = (uint64_t)st->st_size,
        [STF_BLKSIZE] = (uint64_t)st->st_blksize,
        [STF_BLOCKS] = (uint64_t)st->st_blocks,
        [STF_ATIME] = (uint64_t)st->st_atim.tv_sec,
        [STF_ATIME_NS] = (uint64_t)st->st_atim.tv_nsec,
        [STF_MTIME] = (uint64_t)st->st_mtim.tv_sec,
        [STF_MTIME_NS] = (uint64_t)st->st_mtim.tv_nsec,
        [STF_CTIME] = (uint64_t)st->st_ctim.tv_sec,
        [STF_CTIME_NS] = (uint64_t)st->st_ctim.tv_nsec,
        [STF_INO64] = st->st_ino,
    };
    memset(o, 0, g_stat[kind].size);
    es_hs_put_fields(o, g_stat[kind].f, v, NSTF);
    return g_stat[kind].size;
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

int es_hs_get_timeout(es_machine *m, const es_scall *c, uint64_t va, int64_t frac_lim,
                      int64_t *sec, int64_t *frac)
{
    int r = es_hs_get_timespec(m, c, va, sec, frac);
    if (r)
        return r;
    return *sec < 0 || *frac < 0 || *frac >= frac_lim ? -EINVAL : 0;
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
