/* fuzz_util.h - what the libFuzzer targets of tests/fuzz share: a private
 * temporary directory per process, a minimal static ELF around a code
 * buffer, and a guest launched from it with its output discarded. */
#ifndef ENTRYSIM_FUZZ_UTIL_H
#define ENTRYSIM_FUZZ_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "machine.h"

/* Guest address of the code of a fz_elf image (after the headers). */
#define FZ_LOAD_VA 0x400000ull
/* Largest code buffer fz_elf accepts. */
#define FZ_MAX_CODE 4096

/* The process's own temporary directory (created on first use under
 * $TMPDIR or /tmp, removed at exit).  Absolute path. */
const char *fz_tmpdir(void);

/* Writes a static ELF (ELF64 x86-64, or ELF32 i386 when bits32) whose one
 * PT_LOAD (read + execute) holds `code`, entry at its first byte, to
 * `path`.  Returns 0 or -1. */
int fz_write_elf(const char *path, bool bits32, const uint8_t *code, size_t n);

/* es_launch of `path` with the guest root `root`, read-only unless rw,
 * deterministic, 64 MiB of guest memory, guest fds 0-2 on /dev/null, at
 * most max_insns instructions; with the guest kernel unless direct.
 * Returns the machine, or NULL when the launch failed (which is fine for
 * a fuzzer: a rejected program). */
es_machine *fz_launch(const char *path, const char *root, bool rw, bool direct,
                      uint64_t max_insns);

/* A NUL-terminated copy of data[0..n) with n capped at cap (free() it). */
char *fz_cstr(const uint8_t *data, size_t n, size_t cap);

#endif
