#!/bin/sh
# run_entry_paths.sh ENTRYSIM VSYSCALL64 FAST32_SYSENTER FAST32_SYSCALL [MITIGATIONS]
# Runs the kernel_model test programs under every one of the 16 patch sets
# (and --cpu intel for SYSENTER, --cpu amd for 32-bit SYSCALL); each must
# exit 0.  MITIGATIONS: space-separated --mitigations lists, each run in turn
# (default: the default set only).
es=$1 v64=$2 se=$3 sc=$4 mits=${5:-nospec}
ids="dfe64506 fa697140 ebeb8c82 6dc936f1"
fails=0
p=0
while [ $p -lt 16 ]; do
    list="" b=0
    for id in $ids; do
        if [ $(( (p >> b) & 1 )) -eq 1 ]; then list="$list${list:+,}$id"; fi
        b=$((b + 1))
    done
    for mit in $mits; do
        for run in "$v64" "--cpu intel $se" "--cpu amd $sc"; do
            # shellcheck disable=SC2086
            out=$("$es" run --timeout 20 --patches "$list" --mitigations "$mit" $run 2>&1)
            rc=$?
            if [ $rc -ne 0 ]; then
                echo "FAIL patches [$list] mitigations $mit $run: exit $rc: $out"
                fails=$((fails + 1))
            fi
        done
    done
    p=$((p + 1))
done
echo "$fails failures"
[ $fails -eq 0 ]
