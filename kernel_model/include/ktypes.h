/* ktypes.h - the kernel types named in tables/syscall_params.tbl, with
 * Linux's x86-64 sizes and signedness (only integers and pointers cross
 * the syscall boundary, so structs stay incomplete; gen_stubs.py declares
 * every struct it meets). */
#ifndef ES_KTYPES_H
#define ES_KTYPES_H

#include "kmodel.h"

typedef u32 __u32;
typedef s32 __s32;
typedef long loff_t;
typedef long off_t;
typedef unsigned short umode_t;
typedef int pid_t;
typedef unsigned int uid_t;
typedef unsigned int gid_t;
typedef unsigned short old_uid_t;
typedef unsigned short old_gid_t;
typedef s32 key_serial_t;
typedef int key_t;
typedef int mqd_t;
typedef unsigned int qid_t;
typedef int rwf_t;
typedef int timer_t;
typedef int clockid_t;
typedef long time_t;
typedef unsigned long aio_context_t;
typedef unsigned long old_sigset_t;
typedef void (*__sighandler_t)(int);
typedef struct { unsigned long sig[1]; } sigset_t;
typedef struct { unsigned long fds_bits[16]; } fd_set;
typedef struct siginfo siginfo_t;
typedef struct __user_cap_header_struct *cap_user_header_t;
typedef struct __user_cap_data_struct *cap_user_data_t;

/* compat (ia32/x32) types: arch/x86/include/asm/compat.h */
typedef s32 compat_long_t;
typedef u32 compat_ulong_t;
typedef u32 compat_uint_t;
typedef u32 compat_size_t;
typedef s32 compat_off_t;
typedef s32 compat_time_t;
typedef s32 compat_pid_t;
typedef u16 compat_mode_t;
typedef u32 compat_uptr_t;
typedef u32 compat_aio_context_t;
typedef u32 compat_old_sigset_t;
typedef struct { u32 sig[2]; } compat_sigset_t;
typedef struct compat_sigaltstack compat_stack_t;

#endif
