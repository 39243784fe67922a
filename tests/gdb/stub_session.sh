# stub_session.sh - sourced by the real-gdb tests (real_gdb.sh,
# real_gdb_ymm.sh): starts `entrysim run --gdb :0 PROG` in the background,
# and gives the scripts run_gdb (gdb -batch with the given -ex arguments
# against it, output in $tmp/out, then the stub's exit status in $status),
# and check REGEX (a line of gdb's output must match; failures counted in
# $fail).  Needs $entrysim and $prog; exits 77 (skipped) without gdb or
# the guest.
command -v gdb >/dev/null || { echo "gdb is not installed: skipped"; exit 77; }
[ -r "$prog" ] || { echo "guest $prog not built: skipped"; exit 77; }
tmp=$(mktemp -d)
pid=
fail=0
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

run_gdb() {
  timeout 120 gdb -nx -batch -ex "file $prog" -ex "target remote 127.0.0.1:$port" "$@" \
    >"$tmp/out" 2>&1
  echo "--- gdb output"
  cat "$tmp/out"
  wait "$pid"
  status=$?
  pid=
  echo "--- entrysim exit status $status"
  cat "$tmp/err"
}

check() { grep -Eq "$1" "$tmp/out" || { echo "FAIL: expected /$1/"; fail=1; }; }
