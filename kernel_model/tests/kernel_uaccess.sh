#!/bin/sh
# kernel_uaccess.sh ENTRYSIM CC GUEST_C
# The kernel helpers of the SDK (include/uaccess.h, include/printk.h) used
# by student system calls: copy_from_user/copy_to_user/get_user/put_user/
# strncpy_from_user with good pointers and with kernel, non-canonical,
# unmapped and read-only ones (-EFAULT or the bytes not copied, never a
# crash), printk's "[kernel] " lines on the run's stderr and in the
# debugger's output, and current->pid/comm.  Under v4.16, v4.17 and a
# patch subset.  Numbers: the first free ones of the copied table.
es=$1 cc=$2 src=$3
tmp=$(mktemp -d "${TMPDIR:-/tmp}/kernel_uaccess.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
k=$tmp/mykernel
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

"$es" kernel init "$k" >"$tmp/out" 2>&1 || { echo "kernel init: $(cat "$tmp/out")"; exit 1; }
nr=$(awk '!/^#/ && NF >= 3 && $1 < 512 && $1 >= max { max = $1 + 1 } END { print max }' "$k/syscall_64.tbl")
cat >>"$k/student.c" <<'C'

/* (to << 16) | the bytes copy_to_user did not copy back */
SYSCALL_DEFINE3(ucopy, char __user *, dst, const char __user *, src, unsigned long, n)
{
	char buf[64];
	unsigned long from, to;

	if (n > sizeof buf)
		return -EINVAL;
	from = copy_from_user(buf, src, n);
	for (unsigned long i = 0; i < n; i++)
		if (buf[i] >= 'a' && buf[i] <= 'z')
			buf[i] -= 'a' - 'A';
	to = copy_to_user(dst, buf, n);
	return (long)(from << 16 | to);
}

SYSCALL_DEFINE2(uget, const void __user *, p, int, size)
{
	int err = -EINVAL;
	u8 b; u16 h; u32 w; u64 q;

	switch (size) {
	case 1: err = get_user(b, (const u8 __user *)p); q = b; break;
	case 2: err = get_user(h, (const u16 __user *)p); q = h; break;
	case 4: err = get_user(w, (const u32 __user *)p); q = w; break;
	case 8: err = get_user(q, (const u64 __user *)p); break;
	}
	if (err)
		return err;
	return (long)q;
}

SYSCALL_DEFINE3(uput, void __user *, p, int, size, long, v)
{
	switch (size) {
	case 1: return put_user((u8)v, (u8 __user *)p);
	case 2: return put_user((u16)v, (u16 __user *)p);
	case 4: return put_user((u32)v, (u32 __user *)p);
	case 8: return put_user(v, (long __user *)p);
	}
	return -EINVAL;
}

SYSCALL_DEFINE2(ustr, const char __user *, s, long, count)
{
	char buf[32];
	long n = strncpy_from_user(buf, s, count < 31 ? count : 31);

	if (n >= 0 && n < 31) {
		buf[n] = 0;
		printk(KERN_INFO "ustr: '%s' (%ld)\n", buf, n);
	}
	return n;
}

SYSCALL_DEFINE0(whoami)
{
	struct task_struct *t = current;

	pr_info("pid %d tgid %d comm %s\n", t->pid, t->tgid, t->comm);
	printk("fmt %5d|%-4x|%08lx|%+d|%.2s|%c|%%|%llu|%#o\n", 42, 0xab, 0xbeefUL, 7, "xyz",
	       'q', 18446744073709551615ULL, 8);
	printk("part");
	pr_cont(" two\n");
	return t->pid;
}
C
i=0
for name in ucopy uget uput ustr whoami; do
    printf '%s\tcommon\t%s\t\t\t__x64_sys_%s\n' $((nr + i)) $name $name >>"$k/syscall_64.tbl"
    i=$((i + 1))
done
"$es" kernel build "$k" >"$tmp/out" 2>&1 || { echo "kernel build: $(cat "$tmp/out")"; exit 1; }
"$cc" -nostdlib -static -no-pie -ffreestanding -fno-stack-protector -O1 \
    -DNR_UCOPY=$nr -DNR_UGET=$((nr + 1)) -DNR_UPUT=$((nr + 2)) -DNR_USTR=$((nr + 3)) \
    -DNR_WHOAMI=$((nr + 4)) -o "$tmp/uaccess_guest" "$src" || { echo "cannot build the guest"; exit 1; }

for kopt in "--convention v4.16" "--convention v4.17" "--patches fa69714,6dc936f"; do
    # shellcheck disable=SC2086
    "$es" run --deterministic --timeout 20 --kernel "$k" $kopt "$tmp/uaccess_guest" \
        >"$tmp/stdout" 2>"$tmp/stderr"
    rc=$?
    [ $rc -eq 0 ] || fail "$kopt: exit $rc (the number of the failed check): $(cat "$tmp/stderr")"
    for want in "[kernel] ustr: 'hello' (5)" "[kernel] ustr: '' (0)" \
                "[kernel] pid 1000 tgid 1000 comm uaccess_guest" \
                "[kernel] fmt    42|ab  |0000beef|+7|xy|q|%|18446744073709551615|010" \
                "[kernel] part two"; do
        grep -qxF "$want" "$tmp/stderr" || fail "$kopt: no line '$want' in: $(cat "$tmp/stderr")"
    done
    [ -s "$tmp/stdout" ] && fail "$kopt: printk reached stdout: $(cat "$tmp/stdout")"
done

# the debugger: printk lines in its output (what the output panel shows)
printf 'continue\nprint output\n' >"$tmp/script"
"$es" debug --kernel "$k" --script "$tmp/script" "$tmp/uaccess_guest" \
    >"$tmp/dbg" 2>&1
grep -qE "\\[kernel\\] pid [0-9]+ tgid [0-9]+ comm uaccess_guest" "$tmp/dbg" ||
    fail "debugger output has no printk line: $(cat "$tmp/dbg")"

echo "$fails failures"
[ $fails -eq 0 ]
