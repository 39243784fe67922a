#!/usr/bin/env bash
# real_gdb.sh ENTRYSIM PROG - gdb itself against `entrysim run --gdb :0 PROG`
# (PROG = guest/asm_exit42: mov eax,60; mov edi,42; syscall): the target
# description is accepted, a breakpoint is hit, a register written, one
# step enters the guest kernel at CPL 0, and after `detach` the program
# exits with the status gdb wrote.  Exit 77 = skipped (no gdb / no guest).
set -u
entrysim=$1
prog=$2
. "$(dirname "$0")/stub_session.sh"

run_gdb \
  -ex 'printf "START %#lx\n", $pc' \
  -ex 'printf "ENTRY %#lx\n", &_start' \
  -ex 'break *(&_start + 10)' \
  -ex 'continue' \
  -ex 'printf "BP %#lx RAX %ld\n", $pc, $rax' \
  -ex 'set var $rdi = 5' \
  -ex 'stepi' \
  -ex 'printf "KERNEL CPL %d CS %#x RCX %#lx\n", $cpl, $cs, $rcx' \
  -ex 'x/1i $pc' \
  -ex 'p $xmm0.v2_int64' \
  -ex 'p $eflags' \
  -ex 'detach'

entry=$(sed -n 's/^ENTRY \(0x[0-9a-f]*\)$/\1/p' "$tmp/out")
[ -n "$entry" ] || { echo "FAIL: no entry address"; fail=1; }
check "^START $entry\$"
check "^BP $(printf '%#x' $((entry + 10))) RAX 60\$"
check "^KERNEL CPL 0 CS 0x10 RCX $(printf '%#x' $((entry + 12)))\$"
check 'swapgs'
check '^\$1 = \{0, 0\}'
check 'detached'
[ "$status" -eq 5 ] || { echo "FAIL: exit status $status, expected 5"; fail=1; }
[ $fail -eq 0 ] && echo PASS
exit $fail
