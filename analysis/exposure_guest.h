/* exposure_guest.h - the generated guest of `entrysim exposure`: a
 * one-page static ELF that loads a marker into every user register and
 * enters the kernel the way the entry path does (exposure_guest.c). */
#ifndef ENTRYSIM_EXPOSURE_GUEST_H
#define ENTRYSIM_EXPOSURE_GUEST_H

#include <stddef.h>
#include <stdint.h>

#define ES_GUEST_MAX 512 /* bytes of the ELF, at most */

/* Writes the ELF for `entry` calling number nr (for vsyscall: the page's
 * entry index) into elf; returns its size, and in *label_rip the address
 * of the kernel entry instruction, where the user registers are labelled. */
size_t es_exposure_guest(int entry, int nr, uint8_t elf[ES_GUEST_MAX], uint64_t *label_rip);

#endif
