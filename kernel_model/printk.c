/* printk.c - the kernel's formatted output (include/printk.h): vsnprintf,
 * snprintf, printk to the simulator's log (ES_HC_PUTS), and `current`
 * (ES_HC_TASK). */
#include "printk.h"
#include "kstring.h"

/* The output being formatted: len counts every character, stored or not. */
struct fmt_out {
    char *buf;
    size_t size, len;
};

static void out_c(struct fmt_out *o, char c)
{
    if (o->len + 1 < o->size)
        o->buf[o->len] = c;
    o->len++;
}

static void out_pad(struct fmt_out *o, char c, int n)
{
    while (n-- > 0)
        out_c(o, c);
}

/* One conversion's flags, width, precision and length. */
struct fmt_spec {
    int left, zero, plus, space, alt;
    int width, prec; /* prec < 0: none */
    int len;         /* -2 hh, -1 h, 0 int, 1 long, 2 long long (z, t: 1) */
    char conv;
};

static void out_str(struct fmt_out *o, const struct fmt_spec *sp, const char *s)
{
    if (!s)
        s = "(null)";
    int n = (int)strnlen(s, sp->prec >= 0 ? (size_t)sp->prec : ~0ul);
    if (!sp->left)
        out_pad(o, ' ', sp->width - n);
    for (int i = 0; i < n; i++)
        out_c(o, s[i]);
    if (sp->left)
        out_pad(o, ' ', sp->width - n);
}

/* An integer: magnitude v, negative when neg; base 8, 10 or 16. */
static void out_num(struct fmt_out *o, const struct fmt_spec *sp, unsigned long long v, int neg,
                    int base)
{
    char digits[24], prefix[3] = {0};
    const char *set = sp->conv == 'X' ? "0123456789ABCDEF" : "0123456789abcdef";
    int nd = 0;
    while (v) {
        digits[nd++] = set[v % (unsigned)base];
        v /= (unsigned)base;
    }
    int prec = sp->prec >= 0 ? sp->prec : 1; /* "%.0d" of 0 prints nothing */
    int zeros = prec > nd ? prec - nd : 0;
    if (neg || sp->plus || sp->space)
        prefix[0] = neg ? '-' : sp->plus ? '+' : ' ';
    else if (sp->alt && base == 16 && nd)
        prefix[0] = '0', prefix[1] = sp->conv == 'X' ? 'X' : 'x';
    else if (sp->alt && base == 8 && !zeros && (nd || !prec))
        zeros = 1;
    int pl = (int)strlen(prefix), total = pl + zeros + nd;
    if (sp->zero && !sp->left && sp->prec < 0 && sp->width > total) {
        zeros += sp->width - total;
        total = sp->width;
    }
    if (!sp->left)
        out_pad(o, ' ', sp->width - total);
    for (int i = 0; i < pl; i++)
        out_c(o, prefix[i]);
    out_pad(o, '0', zeros);
    while (nd)
        out_c(o, digits[--nd]);
    if (sp->left)
        out_pad(o, ' ', sp->width - total);
}

/* Parses flags, width, precision and length at *f (after the '%'). */
static const char *parse_spec(const char *f, struct fmt_spec *sp, va_list *ap)
{
    *sp = (struct fmt_spec){.prec = -1};
    for (;; f++) {
        if (*f == '-') sp->left = 1;
        else if (*f == '0') sp->zero = 1;
        else if (*f == '+') sp->plus = 1;
        else if (*f == ' ') sp->space = 1;
        else if (*f == '#') sp->alt = 1;
        else break;
    }
    if (*f == '*') {
        sp->width = va_arg(*ap, int);
        if (sp->width < 0)
            sp->left = 1, sp->width = -sp->width;
        f++;
    }
    for (; *f >= '0' && *f <= '9'; f++)
        sp->width = sp->width * 10 + (*f - '0');
    if (*f == '.') {
        sp->prec = 0;
        if (*++f == '*') {
            sp->prec = va_arg(*ap, int);
            f++;
        }
        for (; *f >= '0' && *f <= '9'; f++)
            sp->prec = sp->prec * 10 + (*f - '0');
    }
    for (;; f++) {
        if (*f == 'h') sp->len--;
        else if (*f == 'l') sp->len++;
        else if (*f == 'z' || *f == 't') sp->len = 1;
        else break;
    }
    sp->conv = *f;
    return f;
}

/* One integer conversion's argument, read at its length. */
static void out_int(struct fmt_out *o, struct fmt_spec *sp, va_list *ap)
{
    int is_signed = sp->conv == 'd' || sp->conv == 'i';
    unsigned long long u;
    long long s;
    if (sp->len >= 2) s = va_arg(*ap, long long);
    else if (sp->len == 1) s = va_arg(*ap, long);
    else s = va_arg(*ap, int);
    if (is_signed) {
        if (sp->len == -1) s = (short)s;
        else if (sp->len <= -2) s = (signed char)s;
        int neg = s < 0;
        out_num(o, sp, neg ? 0ull - (unsigned long long)s : (unsigned long long)s, neg, 10);
        return;
    }
    u = (unsigned long long)s;
    if (sp->len == 0) u = (unsigned int)u;
    else if (sp->len == -1) u = (unsigned short)u;
    else if (sp->len <= -2) u = (unsigned char)u;
    out_num(o, sp, u, 0, sp->conv == 'o' ? 8 : sp->conv == 'u' ? 10 : 16);
}

int vsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
{
    struct fmt_out o = {buf, size, 0};
    va_list a;
    va_copy(a, ap);
    for (const char *f = fmt; *f; f++) {
        if (*f != '%') {
            out_c(&o, *f);
            continue;
        }
        struct fmt_spec sp;
        f = parse_spec(f + 1, &sp, &a);
        if (sp.conv == 'd' || sp.conv == 'i' || sp.conv == 'u' || sp.conv == 'x' ||
            sp.conv == 'X' || sp.conv == 'o') {
            out_int(&o, &sp, &a);
        } else if (sp.conv == 'c') {
            char c[2] = {(char)va_arg(a, int), 0};
            sp.prec = 1;
            out_str(&o, &sp, c);
        } else if (sp.conv == 's') {
            out_str(&o, &sp, va_arg(a, const char *));
        } else if (sp.conv == 'p') {
            sp.alt = 1;
            sp.conv = 'x';
            out_num(&o, &sp, (unsigned long)va_arg(a, void *), 0, 16);
        } else if (sp.conv == '%') {
            out_c(&o, '%');
        } else { /* unknown conversion (or the format's end): shown as is */
            out_c(&o, '%');
            if (!sp.conv)
                break;
            out_c(&o, sp.conv);
        }
    }
    va_end(a);
    if (size)
        buf[o.len < size ? o.len : size - 1] = 0;
    return (int)o.len;
}

int snprintf(char *buf, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, size, fmt, ap);
    va_end(ap);
    return n;
}

/* Whether the log is in the middle of a line (the next printk without
 * KERN_CONT starts a new one): the kernel's own state, as Linux's log
 * buffer keeps its continuation record. */
static int log_midline;

static void log_write(const char *text, size_t n)
{
    __asm__ volatile("vmcall" ::"a"(ES_HC_PUTS), "D"(text), "S"(n) : "memory", "cc");
}

/* "[kernel] " before every line; a KERN_CONT message continues the line. */
int printk(const char *fmt, ...)
{
    char msg[PRINTK_MAX], line[PRINTK_MAX + 64];
    int cont = 0;
    if (fmt[0] == KERN_SOH[0] && fmt[1]) {
        cont = fmt[1] == 'c';
        fmt += 2;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    size_t n = 0, total = 0;
    if (log_midline && !cont) { /* the unfinished line ends first */
        line[n++] = '\n';
        log_midline = 0;
    }
    for (const char *p = msg; *p; p++) {
        if (!log_midline) {
            memcpy(line + n, "[kernel] ", 9);
            n += 9;
            log_midline = 1;
        }
        line[n++] = *p;
        if (*p == '\n')
            log_midline = 0;
        if (n > sizeof line - 16) {
            log_write(line, n);
            total += n;
            n = 0;
        }
    }
    if (n) {
        log_write(line, n);
        total += n;
    }
    return (int)total;
}

static struct task_struct current_task;

/* Asks the simulator which task is running (there is no scheduler in the
 * kernel model: the host services own the process). */
struct task_struct *get_current(void)
{
    struct es_task_info t;
    long r;
    __asm__ volatile("vmcall" : "=a"(r) : "a"(ES_HC_TASK), "D"(&t) : "memory", "cc");
    if (r == 0) {
        current_task.pid = t.pid;
        current_task.tgid = t.tgid;
        memcpy(current_task.comm, t.comm, TASK_COMM_LEN);
        current_task.comm[TASK_COMM_LEN - 1] = 0;
    }
    return &current_task;
}
