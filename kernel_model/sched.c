/* sched.c - the kernel's half of the scheduler.  Which task runs next is
 * the simulator's choice (ES_HC_SCHED, sim/host/task.c keeps the task
 * table, as host services keep the rest of the process state); the switch
 * itself is this kernel's: es_switch_to (entry_64.S, Linux's
 * __switch_to_asm) saves the callee-saved registers on the old task's
 * stack, loads CR3, TSS.RSP0 and cpu_current_top_of_stack for the new one
 * and returns on its stack, either into its own es_schedule() or, for a
 * task that never ran, into ret_from_fork. */
#include "kmodel.h"

extern char es_task_stack_top[];
void ret_from_fork(void);

void es_schedule(void)
{
    struct es_next next;
    es_switch_to(&next);
}

/* do_exit's last schedule(): the simulator never picks an ended task again
 * (and ends the run when no task is left). */
void es_task_dead(void)
{
    for (;;)
        es_schedule();
}

void es_sched_init(void)
{
    long r;
    __asm__ volatile("vmcall"
                     : "=a"(r)
                     : "a"(ES_HC_SCHED), "D"(ES_SCHED_INIT), "S"(es_task_stack_top),
                       "d"(&es_percpu.work), "c"(ret_from_fork)
                     : "memory", "cc");
    (void)r;
}

/* ret_from_fork's C half: the child's first return to user mode takes the
 * exit work like any syscall's (Linux: schedule_tail, then
 * syscall_return_slowpath), then leaves by IRET from the pt_regs fork
 * copied (entry_64.S). */
__visible void es_ret_from_fork(struct pt_regs *regs);
__visible void es_ret_from_fork(struct pt_regs *regs)
{
    if (unlikely(es_percpu.work))
        es_exit_to_usermode(regs);
}
