#!/usr/bin/env bash
# The deployable kernel library (kernels/qrnn_kernels.h) through examples/c_inference: for each pooling, on
# awkward shapes (T = 1, B = 1, k = 1, k > T, odd widths, several layers), the C program's forward of a dump
# written by `qrnn run --dump` matches the dump's output and final states, with each ISA variant the CPU has
# (QRNN_KERNELS_ISA). A dump whose output was changed must fail the comparison.
set -euo pipefail
: "${QRNN_CLI:?}" "${QRNN_C_INFERENCE:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The variants this CPU can run (each must then be the one that runs under its cap).
isas=sse41
grep -qw avx2 /proc/cpuinfo && grep -qw fma /proc/cpuinfo && grep -qw f16c /proc/cpuinfo && isas="$isas avx2"
grep -qw avx512f /proc/cpuinfo && grep -qw avx512cd /proc/cpuinfo && grep -qw avx512bw /proc/cpuinfo &&
    grep -qw avx512dq /proc/cpuinfo && grep -qw avx512vl /proc/cpuinfo && isas="$isas avx512"

cases=("f 1 1 1 3 5 1"
       "fo 2 7 3 13 17 2"
       "ifo 5 3 2 9 33 3"
       "fo 3 1 4 16 16 1")
i=0
for c in "${cases[@]}"; do
    read -r pooling k T B n m L <<<"$c"
    dump=$tmp/case$i.h5
    "$QRNN_CLI" run --pooling "$pooling" --window "$k" --seq "$T" --batch "$B" --input "$n" --hidden "$m" \
        --layers "$L" --warmup 0 --repeats 1 --dump "$dump" >/dev/null
    for isa in $isas; do
        out=$(QRNN_KERNELS_ISA=$isa "$QRNN_C_INFERENCE" "$dump")
        echo "$out"
        if [[ $out != *"isa $isa:"* ]]; then
            echo "FAIL: QRNN_KERNELS_ISA=$isa did not run the $isa variant"
            exit 1
        fi
    done
    i=$((i + 1))
done

# The comparison can fail: the same dump with one output value moved.
cp "$tmp/case1.h5" "$tmp/changed.h5"
/usr/bin/python3 -c 'import h5py, sys
with h5py.File(sys.argv[1], "r+") as f: f["/output/h"][0, 0, 0] += 0.01' "$tmp/changed.h5"
if "$QRNN_C_INFERENCE" "$tmp/changed.h5"; then
    echo "FAIL: c_inference accepted a dump whose output was changed"
    exit 1
fi
echo "c_inference: ${#cases[@]} dumps x ISA variants ($isas) match; a changed output is caught"
