/* uaccess.h - reading and writing user memory from a system call body,
 * with Linux's semantics (include/linux/uaccess.h, arch/x86/include/asm/
 * uaccess.h):
 *
 *   copy_from_user(to, from, n)   0, or the number of bytes NOT copied; the
 *                                 uncopied tail of `to` is zeroed
 *   copy_to_user(to, from, n)     0, or the number of bytes NOT copied
 *   get_user(x, ptr)              0, or -EFAULT (x = 0); one load of *ptr's
 *                                 size (1, 2, 4 or 8 bytes)
 *   put_user(x, ptr)              0, or -EFAULT; one store
 *   strncpy_from_user(dst, src, count)
 *                                 the string's length (without its NUL), or
 *                                 count when no NUL came within count bytes
 *                                 (dst is then not terminated), or -EFAULT
 *
 * A pointer is refused before any access when the range is not all below
 * TASK_SIZE_MAX (kernel and non-canonical addresses: access_ok); an access
 * to an unmapped or protected user page faults in the kernel and resumes
 * at the helper's fixup (the exception table of uaccess.S), so a bad
 * pointer is an error code, never a kernel crash.
 */
#ifndef ES_UACCESS_H
#define ES_UACCESS_H

#include "kmodel.h"

/* Linux's TASK_SIZE_MAX with 4-level paging: user addresses end one page
 * below the canonical hole (arch/x86/include/asm/processor.h). */
#define TASK_SIZE_MAX ((1UL << 47) - 4096)

/* The whole range [addr, addr + size) is user space (no wrap-around). */
static inline int access_ok(const void __user *addr, unsigned long size)
{
    unsigned long a = (unsigned long)addr;
    return a <= TASK_SIZE_MAX && size <= TASK_SIZE_MAX - a;
}

unsigned long copy_from_user(void *to, const void __user *from, unsigned long n);
unsigned long copy_to_user(void __user *to, const void *from, unsigned long n);
long strncpy_from_user(char *dst, const char __user *src, long count);

/* uaccess.S: one access each, 0 or -EFAULT (no range check here). */
int __es_get_user_1(u8 *dst, unsigned long uaddr);
int __es_get_user_2(u16 *dst, unsigned long uaddr);
int __es_get_user_4(u32 *dst, unsigned long uaddr);
int __es_get_user_8(u64 *dst, unsigned long uaddr);
int __es_put_user_1(unsigned long uaddr, u8 v);
int __es_put_user_2(unsigned long uaddr, u16 v);
int __es_put_user_4(unsigned long uaddr, u32 v);
int __es_put_user_8(unsigned long uaddr, u64 v);
/* 0 when the user byte can be read and written back unchanged, else -EFAULT
 * (vsyscall.c probes a buffer the emulated call will write). */
int __es_probe_write_1(unsigned long uaddr);
/* Copies n bytes; returns the bytes left when an access faulted (0 = all). */
unsigned long __es_copy_user(void *to, const void *from, unsigned long n);
/* A size other than 1, 2, 4, 8 in get_user/put_user: a link error, as in
 * Linux (__get_user_bad). */
extern int __es_user_bad_size(void);

/* size-dispatched single access: the switch folds away at compile time */
static inline __attribute__((always_inline)) int __es_get_user_n(void *dst, unsigned long p,
                                                                  unsigned long size)
{
    if (!access_ok((const void __user *)p, size))
        return -EFAULT;
    switch (size) {
    case 1: return __es_get_user_1(dst, p);
    case 2: return __es_get_user_2(dst, p);
    case 4: return __es_get_user_4(dst, p);
    case 8: return __es_get_user_8(dst, p);
    default: return __es_user_bad_size();
    }
}

static inline __attribute__((always_inline)) int __es_put_user_n(unsigned long p, u64 v,
                                                                  unsigned long size)
{
    if (!access_ok((void __user *)p, size))
        return -EFAULT;
    switch (size) {
    case 1: return __es_put_user_1(p, (u8)v);
    case 2: return __es_put_user_2(p, (u16)v);
    case 4: return __es_put_user_4(p, (u32)v);
    case 8: return __es_put_user_8(p, v);
    default: return __es_user_bad_size();
    }
}

/* x = *ptr from user space; x is 0 after a fault, as in Linux.  The value
 * travels as the low bytes of a u64 (little-endian) and is converted to
 * *ptr's type, so const pointers and pointer-typed values work. */
#define get_user(x, ptr)                                                                     \
    ({                                                                                       \
        u64 __gu_raw = 0;                                                                    \
        int __gu_err = __es_get_user_n(&__gu_raw, (unsigned long)(ptr), sizeof(*(ptr)));     \
        (x) = (__typeof__(*(ptr)))__gu_raw;                                                  \
        __gu_err;                                                                            \
    })

/* *ptr = x in user space (x converted to *ptr's type first). */
#define put_user(x, ptr)                                                                     \
    __es_put_user_n((unsigned long)(ptr), (u64)(__typeof__(*(ptr)))(x), sizeof(*(ptr)))

#endif
