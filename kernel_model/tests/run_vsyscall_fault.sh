#!/bin/sh
# run_vsyscall_fault.sh ENTRYSIM PROG_PREFIX
# PROG_PREFIX{0,1,2} (vsyscall_fault.S) under the 4.16 and the 4.17
# convention: each must stop with SIGSEGV (exit 139) and report a #PF write
# at the vsyscall entry with the bad pointer as the fault address.
es=$1 prog=$2
fails=0
for mode in 0 1 2; do
    case $mode in
        0) want="rip=0xffffffffff600000: write to 0x1 " ;;
        1) want="rip=0xffffffffff600400: write to 0xffff888000000000 " ;;
        2) want="rip=0xffffffffff600800: write to 0x1 " ;;
    esac
    for list in "" "dfe64506,fa697140,ebeb8c82,6dc936f1"; do
        out=$("$es" run --timeout 20 --patches "$list" "$prog$mode" 2>&1)
        rc=$?
        if [ $rc -ne 139 ]; then
            echo "FAIL mode $mode patches [$list]: exit $rc (want 139): $out"
            fails=$((fails + 1))
        fi
        case $out in
            *"#PF at $want"*) ;;
            *) echo "FAIL mode $mode patches [$list]: report '$out' lacks '#PF at $want'"
               fails=$((fails + 1)) ;;
        esac
    done
done
echo "$fails failures"
[ $fails -eq 0 ]
