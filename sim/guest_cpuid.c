/* guest_cpuid.c - what CPUID reports (see guest_cpuid.h): the features
 * the simulator implements and nothing more, per vendor. */
#include "guest_cpuid.h"

#include <string.h>

#define BIT(n) (1u << (n))

/* Features this simulator implements, and only those: x86-64-v3 (AVX,
 * AVX2, FMA, F16C, BMI1/2, LZCNT, MOVBE) and the crypto extensions; no
 * AVX-512.  OSXSAVE (bit 27) is not a feature but CR4.OSXSAVE, added by
 * es_cpuid from the control register (SDM Vol. 2A CPUID, Table 3-10). */
#define CPUID1_ECX                                                                                 \
    (BIT(0) /* SSE3 */ | BIT(1) /* PCLMULQDQ */ | BIT(9) /* SSSE3 */ | BIT(12) /* FMA */ |        \
     BIT(13) /* CX16 */ | BIT(19) /* SSE4.1 */ | BIT(20) /* SSE4.2 */ | BIT(22) /* MOVBE */ |     \
     BIT(23) /* POPCNT */ | BIT(26) /* XSAVE */ | BIT(28) /* AVX */ | BIT(29) /* F16C */ |        \
     BIT(17) /* PCID (mov.c: CR4.PCIDE, CR3 bit 63) */ | BIT(25) /* AES */ | BIT(30) /* RDRAND */)
#define ES_CR4_OSXSAVE_BIT (1ull << 18)
/* SEP (bit 11): SYSENTER/SYSEXIT are implemented (--cpu intel, and 32-bit
 * code on AMD); both vendors set it in CPUID.1:EDX (SDM Vol. 2A CPUID,
 * Table 3-11; AMD APM Vol. 3, CPUID Fn0000_0001_EDX). */
#define CPUID1_EDX                                                                                 \
    (BIT(0) /* FPU */ | BIT(4) /* TSC */ | BIT(5) /* MSR */ | BIT(8) /* CX8 */ |                  \
     BIT(11) /* SEP */ | BIT(15) /* CMOV */ | BIT(19) /* CLFSH */ | BIT(23) /* MMX */ |            \
     BIT(24) /* FXSR */ | BIT(25) /* SSE */ | BIT(26) /* SSE2 */)
#define CPUID7_EBX                                                                                 \
    (BIT(3) /* BMI1 */ | BIT(5) /* AVX2 */ | BIT(8) /* BMI2 */ | BIT(9) /* ERMS */ |               \
     BIT(18) /* RDSEED */ | BIT(19) /* ADX */ | BIT(29) /* SHA */)
#define CPUID7_EDX (BIT(4) /* FSRM */)
#define CPUIDX1_ECX (BIT(0) /* LAHF-SAHF */ | BIT(5) /* LZCNT (ABM) */ | BIT(8) /* PREFETCHW */)
#define CPUIDX1_EDX (BIT(11) /* SYSCALL */ | BIT(20) /* NX */ | BIT(27) /* RDTSCP */ | BIT(29) /* LM */)

/* Family/model/stepping: a Skylake client part for Intel (06_5EH), a
 * Zen 4 (family 19h, model 11h) for AMD. */
#define SIG_INTEL 0x000506e3u
#define SIG_AMD 0x00a10f11u

/* XSAVE area: the 512-byte legacy area (x87, SSE) + the 64-byte header,
 * then the 256 bytes of the AVX component (YMM_Hi128). */
#define XSAVE_SIZE 576u
#define XSAVE_SIZE_AVX 832u

static void cpuid_str(const char *s, uint32_t *r)
{
    memcpy(r, s, 4);
}

void es_cpuid(const es_machine *m, uint32_t leaf, uint32_t sub, uint32_t r[4])
{
    int amd = m->vendor == 1;
    r[0] = r[1] = r[2] = r[3] = 0; /* [0]=EAX [1]=EBX [2]=ECX [3]=EDX */
    switch (leaf) {
    case 0:
        r[0] = 0xd;
        cpuid_str(amd ? "Auth" : "Genu", &r[1]);
        cpuid_str(amd ? "enti" : "ineI", &r[3]);
        cpuid_str(amd ? "cAMD" : "ntel", &r[2]);
        break;
    case 1:
        r[0] = amd ? SIG_AMD : SIG_INTEL;
        r[1] = (1u << 16) | (8u << 8); /* 1 logical CPU, 64-byte CLFLUSH line, APIC ID 0 */
        r[2] = CPUID1_ECX | ((m->cr4 & ES_CR4_OSXSAVE_BIT) ? BIT(27) : 0);
        r[3] = CPUID1_EDX;
        break;
    case 4: /* Intel deterministic cache parameters (glibc's cache sizing) */
        if (amd)
            break;
        switch (sub) {
        case 0: r[0] = 0x121; r[1] = (7u << 22) | 63; r[2] = 63; break;    /* L1d 32K 8-way */
        case 1: r[0] = 0x122; r[1] = (7u << 22) | 63; r[2] = 63; break;    /* L1i 32K 8-way */
        case 2: r[0] = 0x143; r[1] = (15u << 22) | 63; r[2] = 1023; break; /* L2 1M 16-way */
        case 3: r[0] = 0x163; r[1] = (15u << 22) | 63; r[2] = 32767; break; /* L3 32M 16-way */
        default: break;
        }
        break;
    case 7:
        if (sub == 0) {
            /* Intel: FDP_EXCPTN_ONLY (6) and FCS/FDS deprecated (13), as
             * the x87 save instructions model it (es_x87_saved_ptrs) */
            r[1] = CPUID7_EBX | (amd ? 0 : BIT(6) | BIT(13));
            r[3] = CPUID7_EDX | (amd ? 0 : CPUID7_EDX_INTEL_SPEC_CTRL);
        }
        break;
    case 0xd:
        if (sub == 0) {
            r[0] = 7; /* XCR0 may enable x87 | SSE | AVX */
            r[1] = (m->xcr0 & 4) ? XSAVE_SIZE_AVX : XSAVE_SIZE; /* for XCR0 as it is */
            r[2] = XSAVE_SIZE_AVX;
        } else if (sub == 1) {
            /* XSAVEOPT and XSAVEC (fxsave.c); not XGETBV with ECX = 1, and
             * not XSAVES, which needs the IA32_XSS MSR the model lacks */
            r[0] = BIT(0) | BIT(1);
            /* compacted size of XCR0 | XSS components */
            r[1] = (m->xcr0 & 4) ? XSAVE_SIZE_AVX : XSAVE_SIZE;
        } else if (sub == 2) {
            r[0] = 256; /* YMM_Hi128: 16 registers x 16 bytes ... */
            r[1] = XSAVE_SIZE; /* ... after the legacy region and the header */
        }
        break;
    case 0x80000000:
        r[0] = 0x80000008;
        if (amd) {
            cpuid_str("Auth", &r[1]);
            cpuid_str("enti", &r[3]);
            cpuid_str("cAMD", &r[2]);
        }
        break;
    case 0x80000001:
        r[0] = amd ? SIG_AMD : 0;
        r[2] = CPUIDX1_ECX;
        /* AMD repeats MMX (bit 23) here (APM Vol. 3, Fn8000_0001_EDX) */
        r[3] = CPUIDX1_EDX | (amd ? BIT(23) : 0);
        break;
    case 0x80000002:
    case 0x80000003:
    case 0x80000004: {
        static const char brand[48] = "entrysim x86-64";
        memcpy(r, brand + (leaf - 0x80000002) * 16, 16);
        break;
    }
    case 0x80000005: /* AMD L1: 32K 8-way, 64-byte lines, data and code */
        if (amd)
            r[2] = r[3] = (32u << 24) | (8u << 16) | (1u << 8) | 64;
        break;
    case 0x80000006: /* L2 1M 16-way (encoding 8); AMD also L3 32M */
        r[2] = (1024u << 16) | (8u << 12) | 64;
        if (amd)
            r[3] = (64u << 18) | (8u << 12) | 64;
        break;
    case 0x80000008:
        r[0] = 0x3030; /* 48-bit virtual and physical addresses */
        if (amd)
            r[1] = CPUIDX8_EBX_AMD_SPEC_CTRL;
        break;
    default:
        /* unsupported leaves read as zero (AMD's behaviour; Intel repeats
         * the highest basic leaf, which no program relies on) */
        break;
    }
}

bool es_cpu_has_pcid(const es_machine *m)
{
    uint32_t r[4];
    es_cpuid(m, 1, 0, r);
    return (r[2] >> 17) & 1;
}
