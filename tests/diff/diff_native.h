/* diff_native.h - runs one instruction on the host CPU (64-bit mode or,
 * through a far return to USER32_CS, compatibility mode) and on the
 * simulator, from the same architectural state. */
#ifndef ENTRYSIM_DIFF_NATIVE_H
#define ENTRYSIM_DIFF_NATIVE_H

#include <stddef.h>
#include <stdint.h>

#include "machine.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The state both sides start from and end in.  The layout is fixed: the
 * native stubs (diff_stub.S) address its fields by offset. */
typedef struct diff_state {
    uint64_t gpr[16];   /* 0 */
    uint64_t rflags;    /* 128 */
    uint32_t mxcsr;     /* 136 */
    uint32_t pad;
    uint8_t xmm[16][16]; /* 144 */
    /* 400: FXSAVE image; only its x87 part is used (FCW 0, FSW 2, abridged
     * FTW 4, ST(i) at 32 + 16 * i) */
    uint8_t fx[512] __attribute__((aligned(16)));
    /* 912: bits 255:128 of YMM0-15 (the state's last field, so the offsets
     * above stay those the stubs always used) */
    uint8_t ymmh[16][16];
} diff_state;

/* Memory the instruction may touch: a window at the start of the shim's
 * data region and one below its stack top, at the same addresses natively
 * (mapped MAP_FIXED) and in the guest. */
#define DIFF_DATA 0x600000ull
#define DIFF_DATA_SIZE 0x2000u
#define DIFF_STACK (0x800000ull - 0x2000u)
#define DIFF_STACK_SIZE 0x2000u

/* Outcome of one run. */
typedef struct diff_result {
    diff_state st;
    uint8_t data[DIFF_DATA_SIZE];
    uint8_t stack[DIFF_STACK_SIZE];
    int fault;   /* native: signal number; sim: exception vector + 1 (0 = none) */
    int unimpl;  /* sim: the instruction is not implemented */
    int fault_elsewhere; /* native: the fault was not at the instruction */
} diff_result;

/* Maps the fixed regions and installs the fault handlers.  Returns 0, or -1
 * with a reason in err. */
int diff_native_init(char *err, size_t errsz);

/* Whether the host can run compatibility-mode code (USER32_CS usable).
 * Not under PVM guests or with ia32_emulation=0: the far return to 0x23
 * raises #GP(0x20) there, and so does an LDT code segment. */
int diff_native_has_compat(void);

/* Runs insn (at most 15 bytes) natively in mode (ES_MODE_64 / ES_MODE_32)
 * from `in` with the given memory windows. */
void diff_native_run(int mode, const uint8_t *insn, size_t len, const diff_state *in,
                     const uint8_t *data, const uint8_t *stack, diff_result *out);

/* Text printed if the process crashes outside a native run (a simulator
 * crash): the case's reproduction line.  The string must stay valid. */
void diff_set_context(const char *what);

/* A reusable simulated machine for mode (the shim's layout). */
es_machine *diff_sim_new(int mode);

/* The same on the simulator. */
void diff_sim_run(es_machine *m, const uint8_t *insn, size_t len, const diff_state *in,
                  const uint8_t *data, const uint8_t *stack, diff_result *out);

#ifdef __cplusplus
}
#endif
#endif
