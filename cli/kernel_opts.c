/* kernel_opts.c - see kernel_opts.h.  Moved from sim/boot/launch.c: the
 * machine library takes the parsed values (es_launch_cfg), it does not
 * parse option names. */
#include "kernel_opts.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "host_cpu.h"
#include "kernel.h"
#include "mitigations.h"
#include "opts.h"
#include "timing.h"

/* --convention: the two ends of the series ("4.16" is also accepted) */
static const char *const conventions[] = {"v4.16", "v4.17", NULL};
static const unsigned convention_patches[] = {ES_CONV_V416, ES_CONV_V417};

/* --cpu: index = the vendor number of es_launch_cfg and es_machine */
static const char *const vendors[] = {"intel", "amd", NULL};

/* --syntax: index = ES_SYNTAX_* (decoder.h) */
static const char *const syntaxes[] = {"intel", "att", NULL};

const char es_help_convention[] =
    "the guest kernel's syscall convention: Linux 4.16 (before the pt_regs series) or 4.17 "
    "(after it)";
const char es_help_patches[] =
    "v4.16 plus the listed commits of the series, each named by a unique prefix of at least 7 "
    "hex digits of its id; the series in order: {patches} ({inert} change no code path on "
    "their own: accepted, and said so on stderr) (e.g. --patches dfe6450,fa69714; '' = "
    "v4.16)";
const char es_help_mitigations[] =
    "guest-kernel mitigations on top of the default ({mitdefault}): {mitigations}; no-NAME "
    "removes one, none clears them, all sets all (e.g. --mitigations pti,retpoline)";
const char es_help_cpu[] = "the CPU vendor the guest sees (default {cpudefault})";
const char es_help_uarch[] =
    "the cycle model's microarchitecture: {uarchs}, or host (the model of the CPU this "
    "runs on, when one describes it) (default {uarch})";
const char es_help_kernel[] =
    "the guest kernel built from the kernel tree DIR (`entrysim kernel init DIR`, "
    "`entrysim kernel build DIR`): DIR/build/kernel-pNN.elf instead of the built-in one";

const char *es_vendor_name(int v)
{
    return v >= 0 && v < (int)(sizeof vendors / sizeof vendors[0]) - 1 ? vendors[v] : "?";
}

int es_syntax_pick(const char *s)
{
    return es_opt_pick(s, syntaxes);
}

const char *es_syntaxes_list(const char *sep, const char *last, char *buf, size_t n)
{
    return es_opt_join(syntaxes, sep, last, buf, n);
}

const char *es_conventions_list(char *buf, size_t n)
{
    return es_opt_join(conventions, "|", "|", buf, n);
}

const char *es_vendors_list(char *buf, size_t n)
{
    return es_opt_join(vendors, "|", "|", buf, n);
}

const char *es_uarchs_list(const char *sep, char *buf, size_t n)
{
    return es_opt_join(es_timing_uarchs(), sep, sep, buf, n);
}

int es_uarch_pick(const char *val, const char **out, char *err, size_t errlen)
{
    char why[320];
    if (!strcmp(val, "host")) {
        *out = es_host_uarch(why, sizeof why);
        if (!*out)
            snprintf(err, errlen, "--uarch host: %s", why);
        return *out ? 0 : -1;
    }
    int u = es_opt_pick(val, es_timing_uarchs());
    if (u < 0) {
        snprintf(err, errlen, "--uarch: unknown microarchitecture '%s' (%s, host)", val,
                 es_uarchs_list(", ", why, sizeof why));
        return -1;
    }
    *out = es_timing_uarchs()[u];
    return 0;
}

const char *es_mitigations_list(char *buf, size_t n)
{
    /* es_mitigations_name prints the set in its table's order: "pti,retpoline,..." */
    char raw[128];
    es_mitigations_name(ES_MIT_ALL, raw, sizeof raw);
    size_t k = 0;
    for (const char *s = raw; *s && k + 3 < n; s++) {
        buf[k++] = *s;
        if (*s == ',')
            buf[k++] = ' ';
    }
    buf[k] = 0;
    return buf;
}

const char *es_patches_list(bool only_inert, char *buf, size_t n)
{
    size_t k = 0;
    buf[0] = 0;
    for (int i = 0; es_series(i) && k < n; i++) {
        if (only_inert && es_series(i)->bit)
            continue;
        int w = snprintf(buf + k, n - k, "%s%.12s", k ? (only_inert ? ", " : " ") : "",
                         es_series(i)->id);
        if (w < 0)
            break;
        k += (size_t)w;
    }
    return buf;
}

es_kernel_opts es_kernel_opts_default(void)
{
    return (es_kernel_opts){.patches = ES_CONV_V417, .mitigations = ES_MIT_DEFAULT, .vendor = 1,
                            .uarch = "znver4"};
}

static int set_convention(es_kernel_opts *k, const char *val, char *err, size_t errlen)
{
    for (int i = 0; conventions[i]; i++)
        if (!strcmp(val, conventions[i]) || !strcmp(val, conventions[i] + 1)) {
            k->patches = convention_patches[i];
            k->convention = val;
            return 1;
        }
    char names[64];
    snprintf(err, errlen, "--convention must be %s, not '%s'",
             es_opt_join(conventions, ", ", " or ", names, sizeof names), val);
    return -1;
}

int es_kernel_opt(es_kernel_opts *k, const char *name, const char *val, char *err,
                  size_t errlen)
{
    char why[200];
    if (!strcmp(name, "--convention"))
        return set_convention(k, val, err, errlen);
    if (!strcmp(name, "--patches")) {
        if (es_patches_parse_series(val, &k->patches, &k->patches_named, why, sizeof why))
            return snprintf(err, errlen, "--patches: %s", why), -1;
        k->patch_list = val;
        return 1;
    }
    if (!strcmp(name, "--mitigations")) {
        if (es_mitigations_parse(val, &k->mitigations, why, sizeof why))
            return snprintf(err, errlen, "--mitigations: %s", why), -1;
        k->mitigation_list = val;
        return 1;
    }
    if (!strcmp(name, "--cpu")) {
        int v = es_opt_pick(val, vendors);
        if (v < 0)
            return snprintf(err, errlen, "--cpu must be %s, not '%s'",
                            es_opt_join(vendors, ", ", " or ", why, sizeof why), val),
                   -1;
        k->vendor = v;
        k->cpu = val;
        return 1;
    }
    if (!strcmp(name, "--kernel")) {
        struct stat st;
        if (stat(val, &st) != 0 || !S_ISDIR(st.st_mode))
            return snprintf(err, errlen, "--kernel: '%s' is not a directory (a kernel tree "
                                         "made by 'entrysim kernel init')", val),
                   -1;
        k->kernel_dir = val;
        return 1;
    }
    if (!strcmp(name, "--uarch"))
        return es_uarch_pick(val, &k->uarch, err, errlen) ? -1 : 1;
    return 0;
}

void es_kernel_opts_note(const es_kernel_opts *k, FILE *f)
{
    char note[600];
    es_patches_note(k->patch_list ? k->patches_named : 0, k->patches, note, sizeof note);
    if (note[0])
        fprintf(f, "entrysim: --patches: %s\n", note);
}

int es_kernel_opts_check(const es_kernel_opts *k, char *err, size_t errlen)
{
    if (k->convention && k->patch_list) {
        snprintf(err, errlen, "--convention and --patches both choose the kernel; give one "
                              "(--patches lists commits applied on top of v4.16)");
        return -1;
    }
    return 0;
}
