/* sse.c - the SSE family (SSE, SSE2, SSE3, SSSE3, SSE4.1, SSE4.2, legacy
 * encodings only): registration.  The semantics live in one file per
 * concern, sharing the helpers of sse.h:
 *   sse_mov.c  moves, loads and stores, MOVMSK*, LDMXCSR/STMXCSR
 *   sse_int.c  packed integer arithmetic, shuffles, packs, blends, insert/extract
 *   sse_fp.c   floating-point arithmetic, MIN/MAX, compares, ROUND, DPPS/DPPD, RCP/RSQRT
 *   sse_cvt.c  conversions
 *   sse_str.c  PCMPxSTRx, CRC32, PTEST, MPSADBW, PHMINPOSUW
 * MMX forms and VEX (AVX) forms are left unregistered or rejected, so they
 * raise #UD. */
#include "sse.h"

void es_family_sse(es_handler *t)
{
    es_sse_mov(t);
    es_sse_int(t);
    es_sse_fp(t);
    es_sse_cvt(t);
    es_sse_str(t);
}
