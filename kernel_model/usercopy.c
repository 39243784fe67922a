/* usercopy.c - copy_from_user, copy_to_user and strncpy_from_user
 * (include/uaccess.h), over the fault-fixed accesses of uaccess.S. */
#include "uaccess.h"

/* Linux zeroes what it could not copy (lib/usercopy.c, _copy_from_user),
 * so a short copy never leaves stale kernel stack in the caller's buffer. */
unsigned long copy_from_user(void *to, const void __user *from, unsigned long n)
{
    unsigned long left = n;
    if (access_ok(from, n))
        left = __es_copy_user(to, (const void *)from, n);
    for (unsigned long i = n - left; i < n; i++)
        __asm__ volatile("movb $0, %0" : "=m"(((char *)to)[i])); /* not a memset call */
    return left;
}

unsigned long copy_to_user(void __user *to, const void *from, unsigned long n)
{
    if (!access_ok(to, n))
        return n;
    return __es_copy_user((void *)to, from, n);
}

/* lib/strncpy_from_user.c: at most count bytes, stopping after the NUL; the
 * range checked is what lies below TASK_SIZE_MAX, so a string ending just
 * before the limit is fine and one running into it faults (-EFAULT). */
long strncpy_from_user(char *dst, const char __user *src, long count)
{
    unsigned long s = (unsigned long)src;
    if (count <= 0)
        return 0;
    if (s >= TASK_SIZE_MAX)
        return -EFAULT;
    for (long i = 0; i < count; i++) {
        u8 c;
        if (s + (unsigned long)i >= TASK_SIZE_MAX || __es_get_user_1(&c, s + (unsigned long)i))
            return -EFAULT;
        dst[i] = (char)c;
        if (!c)
            return i;
    }
    return count;
}
