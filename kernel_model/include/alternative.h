/* alternative.h - boot-time patching of the guest kernel's code (after
 * Linux's arch/x86/include/asm/alternative.h and alternative-asm.h; our own
 * macros and record layout, es_boot.h).
 *
 * ALTERNATIVE old, new, feature assembles `old` in place, pads it with
 * 0x90 up to the length of `new` when that is longer, and emits a record
 * into .altinstructions plus the bytes of `new` into .altinstr_replacement.
 * The simulator patches the loaded image before boot
 * (es_kernel_set_mitigations, sim/kernel.c), as apply_alternatives() does
 * in Linux: a site whose feature is in force gets the replacement (NOP
 * filled), the others keep `old`.
 *
 * A replacement is copied, so any relative branch in it must target a
 * label inside the same replacement (the retpoline's call/jmp do); a
 * branch out of the replacement would be wrong after the copy, and
 * es_kernel_set_mitigations does not relocate (Linux recomputes only a
 * leading jmp).  `old` may branch anywhere: it stays where it is.
 *
 * Numeric labels 661-665 are the macro's own; the instructions passed in
 * must not use them. */
#ifndef ES_ALTERNATIVE_H
#define ES_ALTERNATIVE_H

#include "es_boot.h"

#ifdef __ASSEMBLER__

/* .skip -(cond) * n: gas evaluates a true comparison to -1, so this pads
 * by n when the replacement is longer than the original (Linux's trick). */
.macro ALTERNATIVE oldinstr, newinstr, feature
661:
	\oldinstr
662:
	.skip -(((665f-664f)-(662b-661b)) > 0) * ((665f-664f)-(662b-661b)),0x90
663:
	.pushsection .altinstructions,"a"
	.long	661b - .
	.long	664f - .
	.word	\feature
	.byte	663b - 661b
	.byte	663b - 662b
	.byte	665f - 664f
	.byte	0
	.popsection
	.pushsection .altinstr_replacement,"ax"
664:
	\newinstr
665:
	.popsection
.endm

#else /* C: the same as a string for inline asm */

#define ES_ALT_STR_(x) #x
#define ES_ALT_STR(x) ES_ALT_STR_(x)

#define ES_ALTERNATIVE(oldinstr, newinstr, feature)                                          \
    "661:\n\t" oldinstr "\n662:\n\t"                                                         \
    ".skip -(((665f-664f)-(662b-661b)) > 0) * ((665f-664f)-(662b-661b)),0x90\n"              \
    "663:\n\t"                                                                                \
    ".pushsection .altinstructions,\"a\"\n\t"                                                 \
    ".long 661b - .\n\t"                                                                      \
    ".long 664f - .\n\t"                                                                      \
    ".word " ES_ALT_STR(feature) "\n\t"                                                           \
    ".byte 663b - 661b\n\t"                                                                   \
    ".byte 663b - 662b\n\t"                                                                   \
    ".byte 665f - 664f\n\t"                                                                   \
    ".byte 0\n\t"                                                                             \
    ".popsection\n\t"                                                                         \
    ".pushsection .altinstr_replacement,\"ax\"\n"                                             \
    "664:\n\t" newinstr "\n665:\n\t"                                                          \
    ".popsection\n"

#endif
#endif
