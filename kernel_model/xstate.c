/* xstate.c - the user FPU/SSE/AVX state: enabling XSAVE at boot
 * (fpu__init_cpu_xstate), the image in a signal frame and its restore at
 * sigreturn (after Linux 4.17 arch/x86/kernel/fpu/xstate.c and
 * fpu/signal.c; our own code).
 *
 * The image is an XSAVE area in the standard (non-compacted) format of
 * es_xstate_size bytes (CPUID.(0DH,0).EBX for the XCR0 set here: 832 with
 * the AVX component), 64-byte aligned; the unused bytes 464..511 of its
 * FXSAVE part hold struct _fpx_sw_bytes (magic1, the extended size, the
 * features, the xstate size) and FP_XSTATE_MAGIC2 follows the area, so
 * user space and sigreturn can tell it from a plain FXSAVE image.  The
 * header's XSTATE_BV always has x87 and SSE set, as Linux writes it (the
 * FXSAVE part is always valid).  A frame without the magics restores the
 * FXSAVE part and initialises the rest (Linux's fx_only path); a header
 * naming features the kernel did not enable, or with the compacted bit or
 * reserved bytes set, is a bad frame. */
#include "kmodel.h"
#include "kstring.h"
#include "signal_int.h"
#include "uaccess.h"

#define FP_XSTATE_MAGIC1 0x46505853u
#define FP_XSTATE_MAGIC2 0x46505845u
#define SW_BYTES 464 /* struct _fpx_sw_bytes in the FXSAVE part */
#define XSTATE_MIN 576 /* FXSAVE part + header */
#define XSTATE_MAX 1024
#define X86_CR4_OSXSAVE (1ul << 18)
#define X86_FEATURE_XSAVE_ECX (1u << 26) /* CPUID.1:ECX */
/* the user features this kernel manages: x87, SSE, AVX */
#define XFEATURES_UABI 7ull

static unsigned long xstate_size; /* 0: no XSAVE, FXSAVE images */
static u64 xfeatures;
static unsigned char buf[XSTATE_MAX + 4] __attribute__((aligned(64)));

static void cpuid(u32 leaf, u32 sub, u32 r[4])
{
    __asm__ volatile("cpuid" : "=a"(r[0]), "=b"(r[1]), "=c"(r[2]), "=d"(r[3]) : "a"(leaf), "c"(sub));
}

void es_fpu_boot(void)
{
    u32 r[4];
    cpuid(1, 0, r);
    if (!(r[2] & X86_FEATURE_XSAVE_ECX))
        return;
    unsigned long cr4;
    __asm__ volatile("mov %%cr4, %0" : "=r"(cr4));
    __asm__ volatile("mov %0, %%cr4" ::"r"(cr4 | X86_CR4_OSXSAVE) : "memory");
    cpuid(0xd, 0, r);
    u64 mask = (((u64)r[3] << 32) | r[0]) & XFEATURES_UABI;
    __asm__ volatile("xsetbv" ::"a"((u32)mask), "d"((u32)(mask >> 32)), "c"(0) : "memory");
    cpuid(0xd, 0, r); /* EBX: the area's size for XCR0 as set now */
    if (r[1] < XSTATE_MIN || r[1] > XSTATE_MAX)
        return;
    xstate_size = r[1];
    xfeatures = mask;
}

unsigned long es_fpu_frame_size(void)
{
    return xstate_size ? xstate_size + 4 : 512;
}

bool es_fpu_xstate(void)
{
    return xstate_size != 0;
}

/* XSAVE (XSAVE64 for a 64-bit frame: FIP/FDP as 64-bit offsets) into buf,
 * with the software bytes and the trailing magic. */
static void save_image(bool is64)
{
    u32 lo = (u32)xfeatures, hi = (u32)(xfeatures >> 32);
    memset(buf, 0, xstate_size);
    if (is64)
        __asm__ volatile("xsave64 %0" : "+m"(buf) : "a"(lo), "d"(hi) : "memory");
    else
        __asm__ volatile("xsave %0" : "+m"(buf) : "a"(lo), "d"(hi) : "memory");
    u32 sw[12] = {FP_XSTATE_MAGIC1, (u32)xstate_size + 4, lo, hi, (u32)xstate_size};
    memcpy(buf + SW_BYTES, sw, sizeof sw);
    u64 bv;
    memcpy(&bv, buf + 512, 8);
    bv |= 3; /* x87 | SSE: the FXSAVE part is always valid */
    memcpy(buf + 512, &bv, 8);
    u32 m2 = FP_XSTATE_MAGIC2;
    memcpy(buf + xstate_size, &m2, 4);
}

int es_fpu_save_user(unsigned long fx, bool is64)
{
    if (!xstate_size) {
        if (is64)
            __asm__ volatile("fxsave64 %0" : "=m"(*(unsigned char(*)[512])buf));
        else
            __asm__ volatile("fxsave %0" : "=m"(*(unsigned char(*)[512])buf));
        return copy_to_user((void __user *)fx, buf, 512) ? -EFAULT : 0;
    }
    save_image(is64);
    return copy_to_user((void __user *)fx, buf, xstate_size + 4) ? -EFAULT : 0;
}

/* The handler's state (fpu__clear): every component initial.  XRSTOR of a
 * header with XSTATE_BV = 0 initialises them; the standard form still
 * loads MXCSR from the image, hence 0x1f80 in it. */
void es_fpu_init_state(void)
{
    static const u32 mxcsr = 0x1f80;
    if (!xstate_size) {
        __asm__ volatile("fninit; ldmxcsr %0" ::"m"(mxcsr));
        __asm__ volatile("pxor %%xmm0,%%xmm0; pxor %%xmm1,%%xmm1; pxor %%xmm2,%%xmm2;"
                         "pxor %%xmm3,%%xmm3; pxor %%xmm4,%%xmm4; pxor %%xmm5,%%xmm5;"
                         "pxor %%xmm6,%%xmm6; pxor %%xmm7,%%xmm7; pxor %%xmm8,%%xmm8;"
                         "pxor %%xmm9,%%xmm9; pxor %%xmm10,%%xmm10; pxor %%xmm11,%%xmm11;"
                         "pxor %%xmm12,%%xmm12; pxor %%xmm13,%%xmm13; pxor %%xmm14,%%xmm14;"
                         "pxor %%xmm15,%%xmm15" ::: "memory");
        return;
    }
    memset(buf, 0, XSTATE_MIN);
    memcpy(buf + 24, &mxcsr, 4);
    __asm__ volatile("xrstor64 %0" ::"m"(buf), "a"((u32)xfeatures), "d"((u32)(xfeatures >> 32))
                     : "memory");
}

/* Whether the image in buf (its first 512 bytes read) carries the XSAVE
 * software bytes, and the rest is read; false for a plain FXSAVE image. */
static bool read_xstate(unsigned long fx)
{
    u32 sw[5];
    memcpy(sw, buf + SW_BYTES, sizeof sw);
    if (!xstate_size || sw[0] != FP_XSTATE_MAGIC1 || sw[4] < XSTATE_MIN || sw[4] > xstate_size ||
        sw[4] > sw[1])
        return false;
    u32 m2;
    if (copy_from_user(&m2, (const void __user *)(fx + sw[4]), 4) || m2 != FP_XSTATE_MAGIC2)
        return false;
    memset(buf + 512, 0, xstate_size - 512);
    return !copy_from_user(buf + 512, (const void __user *)(fx + 512), sw[4] - 512);
}

bool es_restore_fpu(unsigned long fx, bool is64)
{
    if (!fx) {
        es_fpu_init_state();
        return true;
    }
    if (copy_from_user(buf, (const void __user *)fx, 512))
        return false;
    u32 mxcsr;
    memcpy(&mxcsr, buf + 24, 4);
    mxcsr &= 0xffff; /* reserved bits would fault: mxcsr_feature_mask */
    memcpy(buf + 24, &mxcsr, 4);
    if (read_xstate(fx)) {
        /* validate_user_xstate_header: known features only, the standard
         * format, reserved bytes zero */
        u64 bv, user;
        memcpy(&bv, buf + 512, 8);
        memcpy(&user, buf + SW_BYTES + 8, 8);
        for (int i = 520; i < 576; i++)
            if (buf[i])
                return false;
        if (bv & ~xfeatures)
            return false;
        bv &= user; /* features the frame does not carry start initial */
        memcpy(buf + 512, &bv, 8);
    } else if (xstate_size) {
        /* an FXSAVE-only image: it, and the other components initial */
        u64 bv = 3;
        memset(buf + 512, 0, xstate_size - 512);
        memcpy(buf + 512, &bv, 8);
    } else {
        if (is64)
            __asm__ volatile("fxrstor64 %0" ::"m"(*(unsigned char(*)[512])buf));
        else
            __asm__ volatile("fxrstor %0" ::"m"(*(unsigned char(*)[512])buf));
        return true;
    }
    u32 lo = (u32)xfeatures, hi = (u32)(xfeatures >> 32);
    if (is64)
        __asm__ volatile("xrstor64 %0" ::"m"(buf), "a"(lo), "d"(hi) : "memory");
    else
        __asm__ volatile("xrstor %0" ::"m"(buf), "a"(lo), "d"(hi) : "memory");
    return true;
}
