/* syscalls.h - the syscall definition macros of this kernel, in both of
 * the conventions of the 4.17 series (our own macros, after the seeds):
 *
 *   SYSCALL_DEFINE0..6(name, type1, arg1, ...)
 *   COMPAT_SYSCALL_DEFINE0..6(name, type1, arg1, ...)
 *
 * each followed by the body's block.  What they emit depends on ES_PATCHES:
 *
 * 64-bit and common syscalls (SYSCALL_DEFINEn):
 *   v4.16 (include/linux/syscalls.h before 1bd21c6c): sys_NAME is an alias of
 *     SyS_NAME(long, ...), which casts each long to its type and calls the
 *     body SYSC_NAME.  The 64-bit table calls sys_NAME with six registers
 *     (di, si, dx, r10, r8, r9); the ia32 table with six (unsigned int)
 *     registers (bx, cx, dx, si, di, bp) - whatever the arity.
 *   fa697140 (64-bit half): __x64_sys_NAME(const struct pt_regs *regs)
 *     decodes only the registers of its arity and passes them as longs to
 *     __se_sys_NAME, which casts them and calls the body __do_sys_NAME.
 *   ebeb8c82 (ia32 half): __ia32_sys_NAME(const struct pt_regs *regs) does
 *     the same with bx, cx, dx, si, di, bp truncated to 32 bits.
 *   The halves switch independently; a mixed build has both families.
 * compat syscalls (COMPAT_SYSCALL_DEFINEn), used by ia32 and x32:
 *   v4.16 (include/linux/compat.h): compat_sys_NAME is an alias of
 *     compat_SyS_NAME(long, ...) which "delouses" each argument (cast through
 *     unsigned long) and calls the body C_SYSC_NAME.
 *   ebeb8c82: __ia32_compat_sys_NAME (bx, cx, dx, si, di, bp) and
 *     __x32_compat_sys_NAME (di, si, dx, r10, r8, r9) decode pt_regs and call
 *     __se_compat_sys_NAME, which calls the body __do_compat_sys_NAME.
 *     __compat_sys_ia32_NAME / __compat_sys_x32_NAME (the seed's own names)
 *     are aliases of the two stubs.
 *
 * Differences from Linux, on purpose: the bodies (SYSC_*, __do_sys_*,
 * C_SYSC_*, __do_compat_sys_*) are real functions (noinline, noclone) so the
 * exposure analysis has a probe address, and the __se_* / SyS_* helpers are
 * global so their symbols exist (the compiler still inlines them into the
 * stubs, as Linux's static ones are).  SYSCALL_DEFINE0 builds the same
 * family with no arguments (Linux 4.17 has only __x64_sys_NAME and an
 * __ia32_sys_NAME alias there), so every syscall has every symbol.  The
 * text written after the macro is the body once; each body function above
 * gets its own copy of it (ES_BODY is always inlined).
 */
#ifndef ES_SYSCALLS_H
#define ES_SYSCALLS_H

#include "kmodel.h"
#include "ktypes.h"
#include "kstring.h"
#include "printk.h"
#include "uaccess.h"

/* ES_MAPn(m, t1, a1, ..., tn, an) -> m(t1, a1), ..., m(tn, an); extra pairs
 * are ignored, so a register list of six can be mapped over n arguments. */
#define ES_MAP0(m, ...)
#define ES_MAP1(m, t, a, ...) m(t, a)
#define ES_MAP2(m, t, a, ...) m(t, a), ES_MAP1(m, __VA_ARGS__)
#define ES_MAP3(m, t, a, ...) m(t, a), ES_MAP2(m, __VA_ARGS__)
#define ES_MAP4(m, t, a, ...) m(t, a), ES_MAP3(m, __VA_ARGS__)
#define ES_MAP5(m, t, a, ...) m(t, a), ES_MAP4(m, __VA_ARGS__)
#define ES_MAP6(m, t, a, ...) m(t, a), ES_MAP5(m, __VA_ARGS__)
#define ES_MAP(n, ...) ES_MAP##n(__VA_ARGS__)

/* A parameter list: like ES_MAP but "void" for no parameters. */
#define ES_PLIST0(m, ...) void
#define ES_PLIST1(m, ...) ES_MAP1(m, __VA_ARGS__)
#define ES_PLIST2(m, ...) ES_MAP2(m, __VA_ARGS__)
#define ES_PLIST3(m, ...) ES_MAP3(m, __VA_ARGS__)
#define ES_PLIST4(m, ...) ES_MAP4(m, __VA_ARGS__)
#define ES_PLIST5(m, ...) ES_MAP5(m, __VA_ARGS__)
#define ES_PLIST6(m, ...) ES_MAP6(m, __VA_ARGS__)
#define ES_PLIST(n, ...) ES_PLIST##n(__VA_ARGS__)

#define ES_DECL(t, a) t a
#define ES_LONG(t, a) long a
#define ES_CAST(t, a) (t) a
#define ES_ARGS(t, a) a
#define ES_DELOUSE(t, a) ((t)(unsigned long)(a))

#define ES_STR(x) #x

/* Register -> parameter mappings (seed ebeb8c82: SC_X86_64_REGS_TO_ARGS,
 * SC_IA32_REGS_TO_ARGS). */
#define ES_X86_64_REGS(x)                                                                    \
    ES_MAP(x, ES_ARGS, , regs->di, , regs->si, , regs->dx, , regs->r10, , regs->r8, , regs->r9)
#define ES_IA32_REGS(x)                                                                      \
    ES_MAP(x, ES_ARGS, , (unsigned int)regs->bx, , (unsigned int)regs->cx, ,                 \
           (unsigned int)regs->dx, , (unsigned int)regs->si, , (unsigned int)regs->di, ,     \
           (unsigned int)regs->bp)

#define ES_BODY_DECL(x, prefix, name, ...)                                                   \
    static inline __attribute__((always_inline)) long prefix##name(                         \
        ES_PLIST(x, ES_DECL, __VA_ARGS__))

/* ---- 64-bit/common syscalls ---- */

#if ES_HAS(FA697140) || ES_HAS(EBEB8C82)
/* __se_sys_NAME and the body __do_sys_NAME (seed fa697140, 4.17 names). */
#define ES_SYS_V417(x, name, ...)                                                            \
    long __do_sys##name(ES_PLIST(x, ES_DECL, __VA_ARGS__)) noinline;                         \
    long __se_sys##name(ES_PLIST(x, ES_LONG, __VA_ARGS__));                                  \
    ES_X64_SYS_STUB(x, name, __VA_ARGS__)                                                    \
    ES_IA32_SYS_STUB(x, name, __VA_ARGS__)                                                   \
    long __se_sys##name(ES_PLIST(x, ES_LONG, __VA_ARGS__))                                   \
    {                                                                                        \
        long ret = __do_sys##name(ES_MAP(x, ES_CAST, __VA_ARGS__));                          \
        return ret;                                                                          \
    }                                                                                        \
    long __do_sys##name(ES_PLIST(x, ES_DECL, __VA_ARGS__))                                   \
    {                                                                                        \
        return __es_body##name(ES_MAP(x, ES_ARGS, __VA_ARGS__));                             \
    }
#else
#define ES_SYS_V417(x, name, ...)
#endif

#if ES_HAS(FA697140)
#define ES_X64_SYS_STUB(x, name, ...)                                                        \
    long __x64_sys##name(const struct pt_regs *regs);                                        \
    long __x64_sys##name(const struct pt_regs *regs)                                         \
    {                                                                                        \
        return __se_sys##name(ES_X86_64_REGS(x));                                            \
    }
#else
#define ES_X64_SYS_STUB(x, name, ...)
#endif

#if ES_HAS(EBEB8C82)
#define ES_IA32_SYS_STUB(x, name, ...)                                                       \
    long __ia32_sys##name(const struct pt_regs *regs);                                       \
    long __ia32_sys##name(const struct pt_regs *regs)                                        \
    {                                                                                        \
        return __se_sys##name(ES_IA32_REGS(x));                                              \
    }
#else
#define ES_IA32_SYS_STUB(x, name, ...)
#endif

#if !ES_HAS(FA697140) || !ES_HAS(EBEB8C82)
/* v4.16: sys_NAME = SyS_NAME(long...) -> SYSC_NAME(typed). */
#define ES_SYS_V416(x, name, ...)                                                            \
    long SYSC##name(ES_PLIST(x, ES_DECL, __VA_ARGS__)) noinline;                             \
    long SyS##name(ES_PLIST(x, ES_LONG, __VA_ARGS__));                                       \
    long sys##name(ES_PLIST(x, ES_DECL, __VA_ARGS__))                                        \
        __attribute__((alias("SyS" ES_STR(name))));                                          \
    long SyS##name(ES_PLIST(x, ES_LONG, __VA_ARGS__))                                        \
    {                                                                                        \
        long ret = SYSC##name(ES_MAP(x, ES_CAST, __VA_ARGS__));                              \
        return ret;                                                                          \
    }                                                                                        \
    long SYSC##name(ES_PLIST(x, ES_DECL, __VA_ARGS__))                                       \
    {                                                                                        \
        return __es_body##name(ES_MAP(x, ES_ARGS, __VA_ARGS__));                             \
    }
#else
#define ES_SYS_V416(x, name, ...)
#endif

#define SYSCALL_DEFINEx(x, name, ...)                                                        \
    ES_BODY_DECL(x, __es_body, name, __VA_ARGS__);                                           \
    ES_SYS_V417(x, name, __VA_ARGS__)                                                        \
    ES_SYS_V416(x, name, __VA_ARGS__)                                                        \
    ES_BODY_DECL(x, __es_body, name, __VA_ARGS__)

#define SYSCALL_DEFINE0(name) SYSCALL_DEFINEx(0, _##name, )
#define SYSCALL_DEFINE1(name, ...) SYSCALL_DEFINEx(1, _##name, __VA_ARGS__)
#define SYSCALL_DEFINE2(name, ...) SYSCALL_DEFINEx(2, _##name, __VA_ARGS__)
#define SYSCALL_DEFINE3(name, ...) SYSCALL_DEFINEx(3, _##name, __VA_ARGS__)
#define SYSCALL_DEFINE4(name, ...) SYSCALL_DEFINEx(4, _##name, __VA_ARGS__)
#define SYSCALL_DEFINE5(name, ...) SYSCALL_DEFINEx(5, _##name, __VA_ARGS__)
#define SYSCALL_DEFINE6(name, ...) SYSCALL_DEFINEx(6, _##name, __VA_ARGS__)

/* ---- compat syscalls (ia32 and x32) ---- */

#if ES_HAS(EBEB8C82)
/* seed ebeb8c82 (4.17 names): one stub per compat ABI. */
#define ES_COMPAT(x, name, ...)                                                              \
    long __do_compat_sys##name(ES_PLIST(x, ES_DECL, __VA_ARGS__)) noinline;                  \
    long __se_compat_sys##name(ES_PLIST(x, ES_LONG, __VA_ARGS__));                           \
    long __ia32_compat_sys##name(const struct pt_regs *regs);                                \
    long __ia32_compat_sys##name(const struct pt_regs *regs)                                 \
    {                                                                                        \
        return __se_compat_sys##name(ES_IA32_REGS(x));                                       \
    }                                                                                        \
    long __x32_compat_sys##name(const struct pt_regs *regs);                                 \
    long __x32_compat_sys##name(const struct pt_regs *regs)                                  \
    {                                                                                        \
        return __se_compat_sys##name(ES_X86_64_REGS(x));                                     \
    }                                                                                        \
    /* the names of the seed as posted (ebeb8c82), renamed in 4.17-final;  \
     * both exist so probes and tools written against either find them */ \
    long __compat_sys_ia32##name(const struct pt_regs *regs)                                 \
        __attribute__((alias("__ia32_compat_sys" ES_STR(name))));                            \
    long __compat_sys_x32##name(const struct pt_regs *regs)                                  \
        __attribute__((alias("__x32_compat_sys" ES_STR(name))));                             \
    long __se_compat_sys##name(ES_PLIST(x, ES_LONG, __VA_ARGS__))                            \
    {                                                                                        \
        return __do_compat_sys##name(ES_MAP(x, ES_DELOUSE, __VA_ARGS__));                    \
    }                                                                                        \
    long __do_compat_sys##name(ES_PLIST(x, ES_DECL, __VA_ARGS__))                            \
    {                                                                                        \
        return __es_cbody##name(ES_MAP(x, ES_ARGS, __VA_ARGS__));                            \
    }
#else
/* v4.16: compat_sys_NAME = compat_SyS_NAME(long...) -> C_SYSC_NAME(typed). */
#define ES_COMPAT(x, name, ...)                                                              \
    long C_SYSC##name(ES_PLIST(x, ES_DECL, __VA_ARGS__)) noinline;                           \
    long compat_SyS##name(ES_PLIST(x, ES_LONG, __VA_ARGS__));                                \
    long compat_sys##name(ES_PLIST(x, ES_DECL, __VA_ARGS__))                                 \
        __attribute__((alias("compat_SyS" ES_STR(name))));                                   \
    long compat_SyS##name(ES_PLIST(x, ES_LONG, __VA_ARGS__))                                 \
    {                                                                                        \
        return C_SYSC##name(ES_MAP(x, ES_DELOUSE, __VA_ARGS__));                             \
    }                                                                                        \
    long C_SYSC##name(ES_PLIST(x, ES_DECL, __VA_ARGS__))                                     \
    {                                                                                        \
        return __es_cbody##name(ES_MAP(x, ES_ARGS, __VA_ARGS__));                            \
    }
#endif

#define COMPAT_SYSCALL_DEFINEx(x, name, ...)                                                 \
    ES_BODY_DECL(x, __es_cbody, name, __VA_ARGS__);                                          \
    ES_COMPAT(x, name, __VA_ARGS__)                                                          \
    ES_BODY_DECL(x, __es_cbody, name, __VA_ARGS__)

#define COMPAT_SYSCALL_DEFINE0(name) COMPAT_SYSCALL_DEFINEx(0, _##name, )
#define COMPAT_SYSCALL_DEFINE1(name, ...) COMPAT_SYSCALL_DEFINEx(1, _##name, __VA_ARGS__)
#define COMPAT_SYSCALL_DEFINE2(name, ...) COMPAT_SYSCALL_DEFINEx(2, _##name, __VA_ARGS__)
#define COMPAT_SYSCALL_DEFINE3(name, ...) COMPAT_SYSCALL_DEFINEx(3, _##name, __VA_ARGS__)
#define COMPAT_SYSCALL_DEFINE4(name, ...) COMPAT_SYSCALL_DEFINEx(4, _##name, __VA_ARGS__)
#define COMPAT_SYSCALL_DEFINE5(name, ...) COMPAT_SYSCALL_DEFINEx(5, _##name, __VA_ARGS__)
#define COMPAT_SYSCALL_DEFINE6(name, ...) COMPAT_SYSCALL_DEFINEx(6, _##name, __VA_ARGS__)

/* Table entry types: the v4.16 six-register call and the pt_regs call. */
typedef long (*sys_call_ptr_regs_t)(const struct pt_regs *);
typedef long (*sys_call_ptr_6_t)(unsigned long, unsigned long, unsigned long, unsigned long,
                                 unsigned long, unsigned long);

#endif
