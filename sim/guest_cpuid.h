/* guest_cpuid.h - CPUID as the guest sees it: the instruction (sim/isa/system.c),
 * the AT_HWCAP the loader passes, and the mitigations (which patch the
 * kernel, set MSRs and CR4.PCIDE only as far as CPUID reports the
 * features) all read this one table, so they cannot disagree.
 */
#ifndef ENTRYSIM_CPUID_H
#define ENTRYSIM_CPUID_H

#include <stdbool.h>
#include <stdint.h>

#include "machine.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Speculation control (issue 4's ibrs mitigation): IA32_SPEC_CTRL.IBRS and
 * IA32_PRED_CMD.IBPB exist.  Intel reports them in CPUID.(7,0):EDX[26]
 * (SDM Vol. 2A CPUID; Intel's "Speculative Execution Side Channel
 * Mitigations"); AMD in CPUID Fn8000_0008 EBX[12] IBPB and EBX[14] IBRS
 * (AMD's "Indirect Branch Control Extension"), and not in leaf 7.  Only
 * these bits of the MSRs are implemented (spec_ctrl_advertised in
 * sim/isa/system.c). */
#define CPUID7_EDX_INTEL_SPEC_CTRL (1u << 26)
#define CPUIDX8_EBX_AMD_SPEC_CTRL ((1u << 12) /* IBPB */ | (1u << 14) /* IBRS */)

/* CPUID leaf/subleaf for the machine's vendor (m->vendor): r = EAX, EBX,
 * ECX, EDX.  Unsupported leaves read as zero. */
void es_cpuid(const es_machine *m, uint32_t leaf, uint32_t sub, uint32_t r[4]);

/* CPUID.1:ECX[17]: PCID (CR4.PCIDE, the no-flush bit of CR3). */
bool es_cpu_has_pcid(const es_machine *m);

#ifdef __cplusplus
}
#endif
#endif
