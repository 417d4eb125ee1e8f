# -B's GPU compare kernel as the program carries it (PTX text in
# src/backends/nccl/compare_ptx.h): declared for PTX 7.0 and sm_70, as the
# backend promises old drivers and GPUs, and assembled by this toolkit's
# ptxas for Turing, Ampere and Hopper GPUs as a driver would compile it (no
# GPU needed). Where this machine's nvcc is the release that made the
# header, the header is made again from nccl/compare.cu and must not
# differ: a kernel source changed without its header fails here.
# CB_NVCC=PATH names nvcc (default: on PATH, else /usr/local/cuda/bin/nvcc).
. "$CB_SRCDIR/tests/support/lib.sh"
nvcc=${CB_NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
ptxas=$(dirname "$nvcc")/ptxas
[ -x "$ptxas" ] || skip "no CUDA toolkit's ptxas at $ptxas (CB_NVCC names nvcc), which assembles the PTX"
"$CB_BUILDDIR/tests/print-compare-ptx" >"$CB_TMP/compare.ptx" || fail "print-compare-ptx failed"
grep -q '^\.version 7\.0$' "$CB_TMP/compare.ptx" || fail "the PTX does not declare version 7.0"
grep -q '^\.target sm_70$' "$CB_TMP/compare.ptx" || fail "the PTX does not declare target sm_70"
grep -q '^\.visible \.entry cb_count_differing($' "$CB_TMP/compare.ptx" ||
    fail "the PTX has no entry cb_count_differing"
for arch in sm_75 sm_80 sm_90; do
    "$ptxas" -arch=$arch -o "$CB_TMP/compare.$arch.cubin" "$CB_TMP/compare.ptx" 2>"$CB_TMP/err" ||
        { cat "$CB_TMP/err" >&2; fail "ptxas -arch=$arch refused the PTX"; }
done
header="$CB_SRCDIR/src/backends/nccl/compare_ptx.h"
made_with=$(sed -n 's/^ \* nvcc \([0-9.]*\); do not edit.*/\1/p' "$header")
release=$("$nvcc" --version 2>/dev/null | sed -n 's/.*release \([0-9.]*\),.*/\1/p')
if [ -n "$made_with" ] && [ "$release" = "$made_with" ]; then
    sh "$CB_SRCDIR/src/backends/nccl/compare_ptx.sh" "$nvcc" "$CB_TMP/again.h" ||
        fail "nccl/compare_ptx.sh failed"
    diff "$header" "$CB_TMP/again.h" >&2 ||
        fail "compare_ptx.h differs from what compare.cu makes: run src/backends/nccl/compare_ptx.sh"
else
    echo "note: nvcc $release here, the header was made with $made_with: not made again"
fi
echo "ok"
