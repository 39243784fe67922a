// diff_dump.cc - every generated case written out (ES_DIFF_DUMP=<file>, or
// --dump=): the template table, then a line a case.  Two dumps of one seed
// and case count are byte-identical exactly when the same cases were
// generated and judged alike, which is how a change to the generator or
// the template table is shown to change nothing (or what it changes).
#include <cinttypes>

#include "diff_host.h"

namespace diffhost {
namespace {

// FNV-1a: the memory windows and results go into the dump as hashes.
uint64_t fnv(const void *p, size_t n, uint64_t h = 1469598103934665603ull)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ ((const uint8_t *)p)[i]) * 1099511628211ull;
    return h;
}

void dump_hex(FILE *f, const char *tag, const uint8_t *p, size_t n)
{
    fprintf(f, " %s=", tag);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%02x", p[i]);
}

// A run's result: the state compare() looks at (in 32-bit mode the low
// eight registers; the valid x87 registers), hashed.  The rest differs
// from run to run after a native fault in compatibility mode.
uint64_t result_hash(const diff_result &r, int mode)
{
    const int nreg = mode == ES_MODE_64 ? 16 : 8;
    const uint64_t fl = r.st.rflags & kCmpFlags;
    uint64_t h = fnv(r.st.gpr, 8 * nreg);
    h = fnv(&fl, sizeof fl, h);
    h = fnv(&r.st.mxcsr, sizeof r.st.mxcsr, h);
    h = fnv(r.st.xmm, 16 * nreg, h);
    h = fnv(r.st.ymmh, 16 * nreg, h);
    h = fnv(r.st.fx, 5, h); // FCW, FSW, abridged FTW
    unsigned top = (r.st.fx[3] >> 3) & 7;
    for (int i = 0; i < 8; i++)
        if ((r.st.fx[4] >> ((top + i) & 7)) & 1)
            h = fnv(r.st.fx + 32 + 16 * i, 10, h);
    h = fnv(r.data, sizeof r.data, h);
    h = fnv(r.stack, sizeof r.stack, h);
    return h;
}

} // namespace

void dump_templates(FILE *f)
{
    fprintf(f, "templates %zu\n", templates().size());
    for (const Tmpl &t : templates())
        fprintf(f, "%s %02x %u %02x %d %u %#" PRIx64 " %d\n", t.fam.c_str(), t.pfx, t.map, t.opc,
                t.ext, t.imm, t.f, t.op2);
}

void dump_case(FILE *f, const char *fam, int mode, unsigned i, long tmpl, const Case &c,
               const diff_result &n, const diff_result &s, const Outcome &o)
{
    fprintf(f, "%s/%d #%u t%ld", fam, mode == ES_MODE_64 ? 64 : 32, i, tmpl);
    dump_hex(f, "code", c.code, c.len);
    dump_hex(f, "native", c.native, c.nlen);
    for (int k = 0; k < 16; k++)
        fprintf(f, " %" PRIx64, c.st.gpr[k]);
    fprintf(f, " fl=%" PRIx64 " mx=%x", c.st.rflags, c.st.mxcsr);
    dump_hex(f, "xmm", &c.st.xmm[0][0], sizeof c.st.xmm);
    dump_hex(f, "ymmh", &c.st.ymmh[0][0], sizeof c.st.ymmh);
    dump_hex(f, "fx", c.st.fx, 160);
    fprintf(f, " data=%016" PRIx64 " stack=%016" PRIx64, fnv(c.data, sizeof c.data),
            fnv(c.stack, sizeof c.stack));
    fprintf(f, " | nf=%d sf=%d ok=%d un=%d ud=%d n=%016" PRIx64 " s=%016" PRIx64
               " why=%016" PRIx64 "\n",
            n.fault, s.fault, o.ok, o.unimpl, o.undef_diff, result_hash(n, mode),
            result_hash(s, mode), fnv(o.why.data(), o.why.size()));
}

} // namespace diffhost
