#!/usr/bin/env bash
# Core speed on real programs (issue 18), next to bench/speed.sh's sieve:
# busybox (static glibc, Debian's busybox-static) sort, gzip -c, sha256sum
# and grep over a generated text file, and a static musl program (the sieve
# workload), each run natively, under qemu-x86_64 and under `entrysim run`
# (functional, then --timing), best of N interleaved runs in this one
# script.  MIPS use the instruction count entrysim retires for the program;
# each row prints the ratios to native and to qemu in the same run, and
# every run's output is compared with the native one.
#   usage: bench/mixed.sh [BUILD_DIR] [LINES (default 50000)] [N (default 3)]
set -euo pipefail
build=${1:-build/release}
lines=${2:-50000}
n=${3:-3}
bench=$(cd "$(dirname "$0")" && pwd)
es=$(cd "$(dirname "$build/entrysim")" && pwd)/entrysim
sieve=$(cd "$build/bench" 2>/dev/null && pwd)/sieve_hash
bb=$(command -v busybox || true)
qemu=$(command -v qemu-x86_64 || true)
[ -x "$es" ] || { echo "mixed: no entrysim at $es" >&2; exit 2; }
[ -n "$bb" ] || { echo "mixed: needs busybox (Debian busybox-static)" >&2; exit 2; }
file "$bb" 2>/dev/null | grep -q "statically linked" || { echo "mixed: $bb is not static" >&2; exit 2; }
case $lines$n in *[!0-9]*) echo "mixed: LINES and N are numbers" >&2; exit 2;; esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
cp "$bb" "$tmp/busybox"
[ -x "$sieve" ] && cp "$sieve" "$tmp/sieve_hash"
cd "$tmp"
# the input: LINES lines of pseudo-random words (a fixed LCG: same file everywhere)
awk -v n="$lines" 'BEGIN { x = 12345; split("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima", w);
  for (i = 0; i < n; i++) { x = (x * 69069 + 1) % 4294967296;
    printf "%s %d %s %08x\n", w[int(x / 65536) % 12 + 1], int(x / 16) % 100000, w[int(x / 4096) % 12 + 1], x } }' > data.txt

me=mixed
. "$bench/timed.sh"
same() { cmp -s "$tmp/$1.out" "$tmp/native.out" || { echo "mixed: $1 output differs from native ($2)" >&2; exit 1; }; }

workloads=(
  "sort|./busybox sort data.txt"
  "gzip -c|./busybox gzip -c data.txt"
  "sha256sum|./busybox sha256sum data.txt"
  "grep -c|./busybox grep -c -e delta.*kilo data.txt"
)
[ -x sieve_hash ] && workloads+=("sieve (musl)|./sieve_hash 3")

echo "$lines-line input ($(wc -c < data.txt) bytes), best of $n interleaved runs; load average $(cut -d' ' -f1-3 /proc/loadavg)"
printf "%-14s %12s %9s %9s %9s %9s %8s %8s %8s\n" program insns native qemu entrysim timing \
  "/native" "/qemu" "tim/fn"
for w in "${workloads[@]}"; do
  name=${w%%|*}
  read -r -a cmd <<<"${w#*|}"
  bn="" bq="" bf=""
  for i in $(seq 1 "$n"); do
    bn=$(min "$(t native "${cmd[@]}")" "$bn")
    bf=$(min "$(t func "$es" run --stats --root . "${cmd[@]}")" "$bf"); same func "$name"
    if [ -n "$qemu" ]; then bq=$(min "$(t qemu "$qemu" "${cmd[@]}")" "$bq"); same qemu "$name"; fi
  done
  bt=$(t timing "$es" run --stats --timing --root . "${cmd[@]}"); same timing "$name"
  in=$(insns func)
  [ -n "$in" ] || { echo "mixed: no instruction count for $name" >&2; exit 1; }
  mips() { calc "$in / $1 / 1000000"; }
  mf=$(mips "$bf")
  printf "%-14s %12s %9s %9s %9s %9s %8s %8s %8s\n" "$name" "$in" "$(mips "$bn")" \
    "${bq:+$(mips "$bq")}" "$mf" "$(mips "$bt")" "$(calc "$bn / $bf")" \
    "${bq:+$(calc "$bq / $bf")}" "$(calc "$bf / $bt")"
done
echo "(native, qemu, entrysim, timing: MIPS on entrysim's count; /native, /qemu: entrysim's MIPS as a share of theirs; tim/fn: --timing's share of functional)"
