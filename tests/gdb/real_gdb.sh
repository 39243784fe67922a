#!/usr/bin/env bash
# real_gdb.sh ENTRYSIM PROG - gdb itself against `entrysim run --gdb :0 PROG`
# (PROG = guest/asm_exit42: mov eax,60; mov edi,42; syscall): the target
# description is accepted, a breakpoint is hit, a register written, one
# step enters the guest kernel at CPL 0, and after `detach` the program
# exits with the status gdb wrote.  Exit 77 = skipped (no gdb / no guest).
set -u
entrysim=$1
prog=$2
command -v gdb >/dev/null || { echo "gdb is not installed: skipped"; exit 77; }
[ -r "$prog" ] || { echo "guest $prog not built: skipped"; exit 77; }
tmp=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT

"$entrysim" run --gdb :0 "$prog" 2>"$tmp/err" &
pid=$!
for _ in $(seq 300); do
  grep -q 'listening on' "$tmp/err" && break
  sleep 0.1
done
port=$(sed -n 's/^entrysim: gdb: listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$tmp/err")
[ -n "$port" ] || { echo "FAIL: no port announced"; cat "$tmp/err"; exit 1; }

timeout 120 gdb -nx -batch \
  -ex "file $prog" \
  -ex "target remote 127.0.0.1:$port" \
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
  -ex 'detach' >"$tmp/out" 2>&1
echo "--- gdb output"
cat "$tmp/out"
wait "$pid"
status=$?
pid=
echo "--- entrysim exit status $status"
cat "$tmp/err"

fail=0
check() { grep -Eq "$1" "$tmp/out" || { echo "FAIL: expected /$1/"; fail=1; }; }
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
