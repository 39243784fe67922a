/* host_cpu.c - the CPU entrysim itself runs on (CPUID), for `--uarch
 * host`: which built-in model lists it (tables/uarch/NAME.cfg, cpu.match). */
#include "host_cpu.h"

#include <stdio.h>
#include <string.h>

#include "timing.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>

int es_host_cpu(char *vendor, size_t vn, unsigned *family, unsigned *model)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(0, &a, &b, &c, &d))
        return -1;
    char v[13];
    memcpy(v, &b, 4), memcpy(v + 4, &d, 4), memcpy(v + 8, &c, 4);
    v[12] = 0;
    snprintf(vendor, vn, "%s",
             !strcmp(v, "AuthenticAMD") ? "AMD" : !strcmp(v, "GenuineIntel") ? "Intel" : v);
    __get_cpuid(1, &a, &b, &c, &d);
    /* SDM Vol. 2A CPUID (Figure 3-6) and AMD APM Vol. 3 (Fn0000_0001_EAX):
     * the extended family adds when the base family is 0xF; the extended
     * model is the high nibble for families 6 and 0xF and above */
    unsigned fam = (a >> 8) & 0xf, mod = (a >> 4) & 0xf;
    if (fam == 0xf)
        fam += (a >> 20) & 0xff;
    if (fam == 6 || fam >= 0xf)
        mod |= ((a >> 16) & 0xf) << 4;
    *family = fam;
    *model = mod;
    return 0;
}
#else
int es_host_cpu(char *vendor, size_t vn, unsigned *family, unsigned *model)
{
    (void)vendor, (void)vn, (void)family, (void)model;
    return -1;
}
#endif

const char *es_host_uarch(char *why, size_t n)
{
    char vendor[16];
    unsigned family, model;
    if (es_host_cpu(vendor, sizeof vendor, &family, &model)) {
        snprintf(why, n, "this host is not an x86 machine: no model to pick");
        return NULL;
    }
    const char *u = es_timing_uarch_for_cpu(vendor, family, model);
    if (!u)
        snprintf(why, n,
                 "this host's CPU (%s family 0x%x model 0x%x) is not one a built-in model "
                 "describes (each lists its CPUs in tables/uarch/NAME.cfg, cpu.match); "
                 "pick one with --uarch NAME",
                 vendor, family, model);
    return u;
}
