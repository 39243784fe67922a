#!/usr/bin/env bash
# real_gdb_ymm.sh ENTRYSIM PROG - gdb's YMM registers through the stub's
# org.gnu.gdb.i386.avx feature, on tests/debugger/ymm_guest.S: $ymm0 after
# `vpcmpeqd ymm0, ymm0, ymm0` is all ones (upper half included), `info
# registers ymm0` shows it, vzeroupper's effect is seen, and a value gdb
# writes into $ymm4 reaches the simulated CPU (the guest's vperm2f128 swaps
# its halves into ymm3).  Exit 77 = skipped (no gdb / no guest).
set -u
entrysim=$1
prog=$2
. "$(dirname "$0")/stub_session.sh"

run_gdb \
  -ex 'break ones_set' \
  -ex 'continue' \
  -ex 'printf "YMM0 %#lx %#lx %#lx %#lx\n", $ymm0.v4_int64[0], $ymm0.v4_int64[1], $ymm0.v4_int64[2], $ymm0.v4_int64[3]' \
  -ex 'info registers ymm0' \
  -ex 'break after_getpid' \
  -ex 'continue' \
  -ex 'p $ymm1.v8_float' \
  -ex 'set var $ymm4.v4_int64 = {0x11, 0x22, 0x33, 0x44}' \
  -ex 'stepi' \
  -ex 'stepi' \
  -ex 'printf "YMM3 %#lx %#lx %#lx %#lx\n", $ymm3.v4_int64[0], $ymm3.v4_int64[1], $ymm3.v4_int64[2], $ymm3.v4_int64[3]' \
  -ex 'printf "YMM4H %#lx %#lx\n", $ymm4.v4_int64[2], $ymm4.v4_int64[3]' \
  -ex 'detach'

ones=0xffffffffffffffff
check "^YMM0 $ones $ones $ones $ones\$"
check "^ymm0 +\{.*v4_int64 = \{$ones, $ones, $ones, $ones\}"
check '^\$1 = \{1, 2, 3, 4, 0, 0, 0, 0\}$'
check '^YMM3 0x33 0x44 0x11 0x22$'
check '^YMM4H 0x33 0x44$'
check 'detached'
[ "$status" -eq 0 ] || { echo "FAIL: exit status $status, expected 0"; fail=1; }
[ $fail -eq 0 ] && echo PASS
exit $fail
