#!/usr/bin/env bash
# deb_test.sh BUILD CPACK CMAKE - builds entrysim_*.deb from BUILD with
# cpack, unpacks it into a fresh folder (dpkg-deb -x: what `apt install`
# puts under /, here under $root) and runs the installed copy: `entrysim
# demo`, `entrysim kernel init` (the SDK found relative to the installed
# binary, not in the build tree), the man page and the bash completion.
# Then `cmake --install --prefix` must give the same files.  Exit 77 when
# a tool is missing: skipped, never passed.
set -uo pipefail
build=$1 cpack=$2 cmake=$3
fail() { echo "FAIL: $*"; exit 1; }
for t in "$cpack" dpkg-deb dpkg-shlibdeps; do
  command -v "$t" >/dev/null 2>&1 || { echo "SKIPPED: $t is not installed (dpkg-dev)"; exit 77; }
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/es_deb.XXXXXX") || fail "mktemp"
trap 'rm -rf "$tmp"' EXIT

# --- the package ---
"$cpack" -G DEB --config "$build/CPackConfig.cmake" -B "$tmp/out" >"$tmp/cpack.log" 2>&1 ||
  { cat "$tmp/cpack.log"; fail "cpack"; }
debs=("$tmp"/out/entrysim_*.deb)
[ ${#debs[@]} -eq 1 ] && [ -f "${debs[0]}" ] || fail "no single entrysim_*.deb in $(ls "$tmp/out")"
deb=${debs[0]}
echo "built $(basename "$deb") ($(stat -c %s "$deb") bytes)"
depends=$(dpkg-deb -f "$deb" Depends)
echo "Depends: $depends"
# the shared libraries entrysim links (dpkg-shlibdeps), and the font the
# debugger window opens by path
for d in libc6 libdw1 libzydis4.0 zlib1g; do
  grep -qE "(^|, )$d( |,|$)" <<<"$depends" || fail "Depends lacks $d"
done
if ldd "$build/entrysim" | grep -q libSDL2-2.0; then
  for d in libsdl2-2.0-0 libsdl2-ttf-2.0-0 fonts-dejavu-core; do
    grep -qE "(^|, )$d( |,|$)" <<<"$depends" || fail "Depends lacks $d"
  done
fi
[ "$(dpkg-deb -f "$deb" Package)" = entrysim ] || fail "package name"

# --- installed into a fresh folder ---
root=$tmp/root
dpkg-deb -x "$deb" "$root" || fail "dpkg-deb -x"
for f in usr/bin/entrysim usr/share/entrysim/kernel/kernel.build \
         usr/share/man/man1/entrysim.1.gz usr/share/bash-completion/completions/entrysim \
         usr/share/doc/entrysim/README.md usr/share/doc/entrysim/ARCHITECTURE.md; do
  [ -e "$root/$f" ] || fail "the package has no /$f"
done
# the installed copy knows nothing of the build tree
cd "$tmp" || fail "cd"
env -u ENTRYSIM_KERNEL_SDK "$root/usr/bin/entrysim" demo >demo.out 2>demo.err ||
  { cat demo.err; fail "installed entrysim demo exited $?"; }
grep -q "exposed registers over the program's" demo.out || { cat demo.out; fail "demo output"; }
grep -q "v4.17 0" demo.out || { tail -5 demo.out; fail "demo: v4.17 should expose nothing"; }
env -u ENTRYSIM_KERNEL_SDK "$root/usr/bin/entrysim" kernel init "$tmp/ktree" >init.out 2>&1 ||
  { cat init.out; fail "installed entrysim kernel init"; }
cmp -s "$tmp/ktree/kernel.build" "$root/usr/share/entrysim/kernel/kernel.build" ||
  fail "kernel init did not copy the installed SDK"
[ -f "$tmp/ktree/student.c" ] && [ -d "$tmp/ktree/include" ] || fail "kernel init: tree incomplete"
# the installed SDK is a whole kernel tree: it builds with the host's gcc and
# python3 (the package's Recommends) and runs a program (~15 s)
if command -v gcc >/dev/null 2>&1 && command -v python3 >/dev/null 2>&1; then
  "$root/usr/bin/entrysim" kernel build "$tmp/ktree" >build.out 2>&1 ||
    { tail -20 build.out; fail "installed entrysim kernel build"; }
  prog=$build/bench/sysloop64
  if [ -x "$prog" ]; then
    "$root/usr/bin/entrysim" run --kernel "$tmp/ktree" "$prog" syscall64 getpid 10 >run.out 2>&1 ||
      { cat run.out; fail "installed entrysim run --kernel (the tree it built)"; }
  fi
else
  echo "note: no gcc or python3: the installed SDK's kernel build not tried"
fi
# the labs: graders and starters installed, reference solutions left out
# (docs/TEACHING.md), and the installed entrysim finds them
if [ -e "$build/share/entrysim/labs" ]; then
  [ -f "$root/usr/share/entrysim/labs/lib/grading.py" ] || fail "the package has no labs"
  sol=$(find "$root/usr/share/entrysim/labs" -name solution)
  [ -z "$sol" ] || fail "the package ships reference solutions: $sol"
  env -u ENTRYSIM_LABS "$root/usr/bin/entrysim" lab list >labs.out 2>&1 ||
    { cat labs.out; fail "installed entrysim lab list"; }
fi
"$root/usr/bin/entrysim" --version | grep -qx "entrysim $(dpkg-deb -f "$deb" Version)" ||
  fail "--version differs from the package version"

# the man page and the completion, from the package
zcat "$root/usr/share/man/man1/entrysim.1.gz" | cmp -s - "$build/share/man/man1/entrysim.1" ||
  fail "the packaged man page is not the generated one"
if command -v groff >/dev/null 2>&1; then
  warn=$(zcat "$root/usr/share/man/man1/entrysim.1.gz" | groff -man -Tutf8 -ww -z 2>&1)
  [ -z "$warn" ] || fail "groff: $warn"
fi
comp=$root/usr/share/bash-completion/completions/entrysim
bash -n "$comp" || fail "bash -n on the completion"
got=$(bash --norc --noprofile -c 'source "$1"; COMP_WORDS=(entrysim ru); COMP_CWORD=1; _entrysim;
      echo "${COMPREPLY[@]}"' _ "$comp")
[ "$got" = run ] || fail "completion of 'entrysim ru': '$got'"

# --- cmake --install: the same files under another prefix ---
"$cmake" --install "$build" --prefix "$tmp/prefix" >"$tmp/install.log" 2>&1 ||
  { cat "$tmp/install.log"; fail "cmake --install"; }
(cd "$root/usr" && find . -type f | sort) >pkg.files
(cd "$tmp/prefix" && find . -type f | sort) >inst.files
diff pkg.files inst.files || fail "cmake --install and the .deb install different files"
echo "ok: $(wc -l <pkg.files) files; demo and kernel init ran from $root/usr/bin"
