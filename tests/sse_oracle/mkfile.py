# mkfile.py - wraps oracle rows (<name>.rows) into tests/test_sse_<name>.cc.
import sys
name, suite, title, desc = sys.argv[1:5]
rows = open(f'{name}.rows').read().rstrip('\n').split('\n')
out = [f"// {title}", "//", f"// {desc}", "//",
       "// Rows: {bytes, disassembly, initial state, expected state} (format in",
       "// tests/shim/sse_case.h).  Every expected state was produced by running the",
       "// bytes natively on the AMD Zen 4 host (tests/sse_oracle/), never by hand.",
       '#include "sse_case.h"', "", "static const SseCase kCases[] = {"]
for r in rows:
    if '"0fae17", "ldmxcsr [rdi]", "rdi=D+0x0 mem=801f0200 m32"' in r:
        out.append("    // MXCSR bit 17 (AMD MisAlignSse's MM): the host accepts it, entrysim's")
        out.append("    // MXCSR_MASK is 0xFFFF (sse.h ES_MXCSR_WRITABLE), so #GP(0) here.")
        r = '    {"0fae17", "ldmxcsr [rdi]", "rdi=D+0x0 mem=801f0200 m32", "fault=13 mxcsr=1f80"},'
    out.append(r)
out += ["};", "", f"SSE_CASE_SUITE({suite}, kCases)", ""]
open(f'../test_sse_{name}.cc', 'w').write('\n'.join(out))
