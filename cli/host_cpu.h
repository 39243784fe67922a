/* host_cpu.h - the CPU entrysim itself runs on, for `--uarch host`. */
#ifndef ENTRYSIM_HOST_CPU_H
#define ENTRYSIM_HOST_CPU_H

#include <stddef.h>

/* The host CPU's vendor ("AMD", "Intel" or the CPUID string) and its
 * displayed family and model (CPUID leaf 1 with the extended fields as the
 * vendors' manuals combine them); 0, or -1 off x86. */
int es_host_cpu(char *vendor, size_t vn, unsigned *family, unsigned *model);

/* The built-in cycle model of the host CPU, or NULL with the reason (the
 * CPU, and that no model lists it) in why. */
const char *es_host_uarch(char *why, size_t n);

#endif
