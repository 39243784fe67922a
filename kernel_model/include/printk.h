/* printk.h - the kernel log and the current task, for syscall bodies.
 *
 *   printk(KERN_INFO "add2(%ld, %ld)\n", a, b);
 *   pr_info("pid %d comm %s\n", current->pid, current->comm);
 *
 * printk formats like Linux's (printf conversions d i u x X o c s p %, flags
 * - 0 + space #, width and precision, * for either, length hh h l ll z t;
 * %p prints the address in hex: no pointer hashing in a teaching kernel)
 * and writes each line with a "[kernel] " prefix to the run's log: the
 * stderr of `entrysim run`, the output panel of `entrysim debug`.  A leading
 * KERN_<LEVEL> is dropped (there is no loglevel filter); KERN_CONT continues
 * the previous line.  A message longer than PRINTK_MAX bytes is cut. */
#ifndef ES_PRINTK_H
#define ES_PRINTK_H

#include "kmodel.h"

typedef __builtin_va_list va_list;
#define va_start(ap, last) __builtin_va_start(ap, last)
#define va_arg(ap, type) __builtin_va_arg(ap, type)
#define va_end(ap) __builtin_va_end(ap)
#define va_copy(d, s) __builtin_va_copy(d, s)

#define PRINTK_MAX 512

/* include/linux/kern_levels.h */
#define KERN_SOH "\001"
#define KERN_EMERG KERN_SOH "0"
#define KERN_ALERT KERN_SOH "1"
#define KERN_CRIT KERN_SOH "2"
#define KERN_ERR KERN_SOH "3"
#define KERN_WARNING KERN_SOH "4"
#define KERN_NOTICE KERN_SOH "5"
#define KERN_INFO KERN_SOH "6"
#define KERN_DEBUG KERN_SOH "7"
#define KERN_CONT KERN_SOH "c"

/* The number of characters written to the log (prefixes included). */
int printk(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#define pr_emerg(fmt, ...) printk(KERN_EMERG fmt, ##__VA_ARGS__)
#define pr_err(fmt, ...) printk(KERN_ERR fmt, ##__VA_ARGS__)
#define pr_warn(fmt, ...) printk(KERN_WARNING fmt, ##__VA_ARGS__)
#define pr_notice(fmt, ...) printk(KERN_NOTICE fmt, ##__VA_ARGS__)
#define pr_info(fmt, ...) printk(KERN_INFO fmt, ##__VA_ARGS__)
#define pr_debug(fmt, ...) printk(KERN_DEBUG fmt, ##__VA_ARGS__)
#define pr_cont(fmt, ...) printk(KERN_CONT fmt, ##__VA_ARGS__)

/* C99 semantics: the length the whole output would have; at most size - 1
 * characters and a NUL are stored. */
int vsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));
int snprintf(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The task that made the system call in progress (Linux's task_struct,
 * the fields a syscall body reads most).  One process, one thread today:
 * pid == tgid == getpid(). */
#define TASK_COMM_LEN 16
struct task_struct {
    int pid;                  /* pid_t: the thread's id (gettid) */
    int tgid;                 /* the process id (getpid) */
    char comm[TASK_COMM_LEN]; /* the executable's name, or prctl(PR_SET_NAME) */
};
struct task_struct *get_current(void);
#define current get_current()

#endif
