// case_spec.h - what the table-driven instruction tests share to read their
// "key=value key=value" state lists (sse_case.h, test_avx2.cc) and to name
// general registers (est_case.h).
#ifndef ENTRYSIM_CASE_SPEC_H
#define ENTRYSIM_CASE_SPEC_H

#include <string>

// rax..r15 in the SDM's register-number order.
static const char *const kCaseGprNames[16] = {"rax", "rcx", "rdx", "rbx", "rsp", "rbp",
                                              "rsi", "rdi", "r8",  "r9",  "r10", "r11",
                                              "r12", "r13", "r14", "r15"};

// The register number of a GPR name, -1 for another name.
static inline int case_gpr(const std::string &name)
{
    for (int i = 0; i < 16; i++)
        if (name == kCaseGprNames[i])
            return i;
    return -1;
}

// Calls f(key, value) for each space-separated token of spec; a token
// without '=' has an empty value.
template <class F> static inline void case_tokens(const char *spec, F f)
{
    std::string all(spec);
    size_t pos = 0;
    while (pos < all.size()) {
        size_t end = all.find(' ', pos);
        if (end == std::string::npos)
            end = all.size();
        std::string tok = all.substr(pos, end - pos);
        pos = end + 1;
        if (tok.empty())
            continue;
        size_t eq = tok.find('=');
        f(tok.substr(0, eq), eq == std::string::npos ? std::string() : tok.substr(eq + 1));
    }
}

#endif
