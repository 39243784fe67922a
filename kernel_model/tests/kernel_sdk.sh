#!/bin/sh
# kernel_sdk.sh ENTRYSIM CC ADD2_S [PYTHON CHECK_IMAGES NM OBJDUMP]
# `entrysim kernel init` + a system call add2 written in student.c with a
# row in each table + `entrysim kernel build`, then a program calling it
# through `entrysim run --kernel` under v4.16, v4.17 and patch subsets (64-bit
# SYSCALL; i386 int $0x80 when CC builds -m32).  Then bad trees: a duplicate
# number, a row without a body, a gcc error, an unknown parameter type, a bad
# kernel.build line; each must exit 2 naming the file and line and leave the
# last good build in place.  Also --kernel with no build and a malformed image.
# With the optional arguments, check_images.py checks the student's 16 images
# against the student's tables (add2's stubs in both conventions, every slot).
# --timing names add2 (the kernel's own table); exposure and explain
# --kernel analyse it (names, numbers, arities and images of the tree).
# The numbers used are the first free ones of the copied tables (no number is
# assumed free).
es=$1 cc=$2 src=$3 py=$4 check=$5 nm=$6 objdump=$7
tmp=$(mktemp -d "${TMPDIR:-/tmp}/kernel_sdk.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
k=$tmp/mykernel
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# the first number past the native rows (64-bit table: below the x32 rows at 512)
free_nr() { awk -v lim="$2" '!/^#/ && NF >= 3 && $1 < lim && $1 >= max { max = $1 + 1 } END { print max }' "$1"; }

"$es" kernel init "$k" >"$tmp/out" 2>&1 || fail "kernel init: $(cat "$tmp/out")"
[ -f "$k/student.c" ] && [ -f "$k/kernel.build" ] && [ -f "$k/include/syscalls.h" ] ||
    fail "kernel init: tree incomplete: $(ls "$k")"
"$es" kernel init "$k" >"$tmp/out" 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q "not empty" "$tmp/out" || fail "init of a non-empty dir: exit $rc: $(cat "$tmp/out")"

nr64=$(free_nr "$k/syscall_64.tbl" 512)
nr32=$(free_nr "$k/syscall_32.tbl" 100000)
cat >>"$k/student.c" <<'C'

SYSCALL_DEFINE2(add2, long, a, long, b)
{
	return a + b;
}
C
printf '%s\tcommon\tadd2\t\t\t__x64_sys_add2\n' "$nr64" >>"$k/syscall_64.tbl"
printf '%s\ti386\tadd2\t\t\t__ia32_sys_add2\n' "$nr32" >>"$k/syscall_32.tbl"
"$es" kernel build "$k" >"$tmp/out" 2>&1 || fail "kernel build: $(cat "$tmp/out")"
[ -f "$k/build/kernel-p15.elf" ] || fail "no $k/build/kernel-p15.elf"

"$cc" -nostdlib -static -no-pie -DNR="$nr64" -o "$tmp/add2" "$src" || fail "cannot build add2"
progs="$tmp/add2"
if "$cc" -m32 -nostdlib -static -no-pie -DI386 -DNR="$nr32" -o "$tmp/add2_32" "$src" 2>/dev/null; then
    progs="$progs $tmp/add2_32"
fi
check_runs() { # $1: what
    for prog in $progs; do
        for kopt in "--convention v4.16" "--convention v4.17" "--patches fa69714" \
                    "--patches ebeb8c8,6dc936f" "--patches dfe6450,fa69714,6dc936f"; do
            # shellcheck disable=SC2086
            out=$("$es" run --timeout 20 --kernel "$k" $kopt "$prog" 2>&1)
            rc=$?
            [ $rc -eq 42 ] || fail "$1: $prog $kopt: exit $rc, expected 42: $out"
        done
    done
}
check_runs "good tree"
# --timing names the new call from the kernel's own table
out=$("$es" run --timing --kernel "$k" "$tmp/add2" 2>&1)
echo "$out" | grep -Eq "syscall64 +add2 +$nr64 " || fail "--timing does not name add2: $out"
# exposure and explain read the tree: its rows (add2, 2 arguments), its images
out=$("$es" exposure --kernel "$k" --syscall add2 2>&1)
rc=$?
[ $rc -eq 0 ] || fail "exposure --kernel: exit $rc: $out"
echo "$out" | grep -q "add2 via syscall64 (nr $nr64, 2 arguments), v4.16" || fail "exposure v4.16 header: $out"
echo "$out" | grep -Eq "table_target +sys_add2 +.*r8=r8! r9=r9!" || fail "v4.16 sys_add2 not exposed: $out"
# (rdx=nr: the mask array_index_nospec computed from nr is still in rdx)
echo "$out" | grep -Eq "body +__do_sys_add2 +rdx=nr rsi=rsi rdi=rdi$" || fail "v4.17 body: $out"
echo "$out" | grep -q "v4.17: 0 exposed registers in 1 syscall" || fail "v4.17 summary: $out"
if [ "$progs" != "$tmp/add2" ]; then
    out=$("$es" exposure --kernel "$k" --syscall add2 --entry int80 --convention v4.17 2>&1)
    echo "$out" | grep -Eq "body +__do_sys_add2 +.*rsi=ecx rdi=ebx" || fail "exposure int80: $out"
fi
out=$("$es" exposure --syscall add2 2>&1)
[ $? -eq 2 ] || fail "exposure of add2 without --kernel: $out"
out=$("$es" explain --kernel "$k" add2 2>&1)
rc=$?
[ $rc -eq 0 ] && echo "$out" | grep -q "<__x64_sys_add2>:" && echo "$out" | grep -q "<__do_sys_add2>:" ||
    fail "explain --kernel: exit $rc: $out"
if [ -n "$check" ] && [ -n "$nm" ] && [ -n "$objdump" ]; then
    "$py" "$check" "$k/build" "$k" "$nm" "$objdump" >"$tmp/out" 2>&1 ||
        fail "check_images.py on the student's kernel: $(cat "$tmp/out")"
fi
sum=$(cat "$k"/build/*.elf | cksum)

# bad trees: exit 2, a message naming FILE:LINE, the last build unchanged
expect_bad() { # $1: what, $2: grep pattern of the message
    "$es" kernel build "$k" >"$tmp/out" 2>&1
    rc=$?
    [ $rc -eq 2 ] || fail "$1: exit $rc, expected 2: $(cat "$tmp/out")"
    grep -q -- "$2" "$tmp/out" || fail "$1: no '$2' in: $(cat "$tmp/out")"
    [ "$(cat "$k"/build/*.elf | cksum)" = "$sum" ] || fail "$1: $k/build changed"
    ls -a "$k" | grep -q build-tmp && fail "$1: temporary build left behind"
}
# bad_tree FILE TEXT BACK WHAT MESSAGE: TEXT appended to the tree's FILE must
# fail the build with FILE:LINE (its last line minus BACK) and MESSAGE
bad_tree() {
    cp "$k/$1" "$tmp/good"
    printf '%b' "$2" >>"$k/$1"
    expect_bad "$4" "$1:$(($(wc -l <"$k/$1") - $3)):.*$5"
    cp "$tmp/good" "$k/$1"
}
bad_tree syscall_64.tbl "$nr64\tcommon\tadd3\t__x64_sys_add2\n" 0 "duplicate number" \
    "number $nr64 appears twice"
bad_tree syscall_64.tbl "$((nr64 + 1))\tcommon\tsub2\t__x64_sys_sub2\n" 0 "row without a body" \
    "error: sub2 ($((nr64 + 1))) has no body"
bad_tree student.c "SYSCALL_DEFINE1(oops, long, a)\n{\n\treturn a +;\n}\n" 1 "gcc error" "error"
bad_tree student.c "SYSCALL_DEFINE1(oops, bogus_t, a)\n{\n\treturn 0;\n}\n" 3 \
    "unknown parameter type" "error: unknown parameter type 'bogus_t'"
bad_tree kernel.build "src nosuch.c 0\n" 0 "bad kernel.build" "error: no such source file"

check_runs "after the failed builds"

# --kernel with no build, and a malformed image: refused with a message
mkdir "$tmp/empty"
out=$("$es" run --kernel "$tmp/empty" "$tmp/add2" 2>&1)
rc=$?
[ $rc -eq 1 ] && echo "$out" | grep -q "no such image" || fail "--kernel without a build: exit $rc: $out"
out=$("$es" exposure --kernel "$tmp/empty" --syscall add2 2>&1)
rc=$?
[ $rc -eq 1 ] && echo "$out" | grep -q "syscalls.tsv: cannot open" || fail "exposure, no build: exit $rc: $out"
head -c 3000 "$k/build/kernel-p15.elf" >"$tmp/short.elf" && mv "$tmp/short.elf" "$k/build/kernel-p15.elf"
out=$("$es" run --kernel "$k" "$tmp/add2" 2>&1)
rc=$?
[ $rc -eq 1 ] && echo "$out" | grep -q "kernel-p15.elf" || fail "truncated image: exit $rc: $out"

echo "$fails failures"
[ $fails -eq 0 ]
