// est_native.cc - host oracle for the instruction tables of
// tests/test_<name>.cc: runs every case's bytes natively on this x86-64
// host, with the case's registers, flags and data memory, and compares
// the outcome with the table's expected values.  Run it after editing a
// table: an expected value nobody checked against real hardware is a guess.
//
// Built per table by tests/oracle/CMakeLists.txt as es_oracle_<name>
// (x86-64 Linux hosts only; not a ctest: flags the SDM leaves undefined
// differ between vendors, and the tables follow AMD Zen).  32-bit cases run
// through their `native` 64-bit equivalent, or are reported unchecked.
//
// The bytes run through native_run.h.
#define EST_NATIVE_CHECK
#include "est_case.h"

#include <vector>

#include "native_run.h"

struct Suite {
    const char *name;
    const EstCase *c;
    size_t n;
};

static std::vector<Suite> &suites()
{
    static std::vector<Suite> s;
    return s;
}

int est_native_register(const char *suite, const EstCase *cases, size_t n)
{
    suites().push_back({suite, cases, n});
    return 0;
}

#include EST_TEST_FILE

static bool fault_matches(int vector, int sig)
{
    switch (vector) {
    case ES_VEC_DE: return sig == SIGFPE;
    case ES_VEC_UD: return sig == SIGILL;
    case ES_VEC_GP: case 14 /* #PF */: return sig == SIGSEGV || sig == SIGBUS;
    default: return false;
    }
}

int main()
{
    int bad = 0, checked = 0, unchecked = 0;
    native_init();
    for (const Suite &s : suites()) {
        for (size_t i = 0; i < s.n; i++) {
            const EstCase &c = s.c[i];
            const char *hex = c.mode == ES_MODE_64 ? c.hex : c.native;
            if (!hex) {
                unchecked++;
                printf("unchecked %s.%zu %s (32-bit only)\n", s.name, i, c.dis);
                continue;
            }
            std::vector<uint8_t> code = est_hex(hex);
            uint64_t r[16] = {0};
            for (const EstReg &x : c.in)
                r[x.r] = x.v;
            uint64_t exp[16];
            memcpy(exp, r, sizeof r);
            for (const EstReg &x : c.out)
                exp[x.r] = x.v;
            memset((void *)(uintptr_t)NAT_DATA, 0, 0x10000);
            for (const EstMem &w : c.mem_in)
                memcpy((void *)(uintptr_t)(NAT_DATA + w.off), &w.v, w.size);
            uint64_t f = 0x202 | c.fl_in;
            int sig = native_run(code.data(), code.size(), r, &f);
            checked++;
            std::string msg;
            char b[128];
            if (c.fault >= 0) {
                if (!fault_matches(c.fault, sig)) {
                    snprintf(b, sizeof b, " expected vector %d, got signal %d", c.fault, sig);
                    msg += b;
                }
            } else if (sig) {
                snprintf(b, sizeof b, " signal %d", sig);
                msg += b;
            } else {
                for (int k = 0; k < 16; k++)
                    if (k != 4 && r[k] != exp[k]) {
                        snprintf(b, sizeof b, " gpr%d=%llx (table %llx)", k,
                                 (unsigned long long)r[k], (unsigned long long)exp[k]);
                        msg += b;
                    }
                if ((f & ES_ARITH_FLAGS) != c.fl_out) {
                    snprintf(b, sizeof b, " flags=%llx (table %x)",
                             (unsigned long long)(f & ES_ARITH_FLAGS), c.fl_out);
                    msg += b;
                }
                for (const EstMem &w : c.mem_out) {
                    uint64_t v = 0;
                    memcpy(&v, (void *)(uintptr_t)(NAT_DATA + w.off), w.size);
                    if (v != w.v) {
                        snprintf(b, sizeof b, " mem+%x=%llx (table %llx)", w.off,
                                 (unsigned long long)v, (unsigned long long)w.v);
                        msg += b;
                    }
                }
            }
            if (!msg.empty()) {
                bad++;
                printf("MISMATCH %s.%zu %s [%s]:%s\n", s.name, i, c.dis, hex, msg.c_str());
            }
        }
    }
    printf("%d cases run natively, %d mismatches, %d unchecked\n", checked, bad, unchecked);
    return bad != 0;
}
