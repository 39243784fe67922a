# bench/timed.sh - helpers the speed scripts source (bench/speed.sh,
# bench/mixed.sh): arithmetic, the best of runs, and one timed run.
# The sourcing script sets $tmp (its scratch directory) and $me (its name
# for messages).
calc() { awk "BEGIN { printf \"%.3f\", $1 }"; }
min() { awk -v a="$1" -v b="$2" 'BEGIN { print (b == "" || a + 0 < b + 0) ? a : b }'; }
# t NAME CMD...: wall seconds of CMD, its output kept in $tmp/NAME.{out,err}
t() {
  local name=$1 s e; shift
  s=$(date +%s.%N)
  "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" || { echo "$me: '$*' failed:" >&2; tail -3 "$tmp/$name.err" >&2; exit 1; }
  e=$(date +%s.%N); calc "$e - $s"
}
# the instruction count of `entrysim run --stats` in $tmp/NAME.err
insns() { sed -n 's/.*stats: *\([0-9]*\) instructions retired.*/\1/p' "$tmp/$1.err" | head -1; }
