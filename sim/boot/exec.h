/* exec.h - execve's loading half: a new static ELF into the current
 * process (m->hooks.exec, see sim/machine.h). */
#ifndef ENTRYSIM_EXEC_H
#define ENTRYSIM_EXEC_H

#include "machine.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Installs m->hooks.exec (es_launch does; tests that build machines by
 * hand call it themselves). */
void es_exec_install(es_machine *m);

#ifdef __cplusplus
}
#endif
#endif
