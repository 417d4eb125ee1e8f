# The fuzz targets over their corpus: seeds, and every input that once made
# them fail (add such inputs to tests/fuzz/corpus/ when a fuzzer finds one).
. "$CB_SRCDIR/tests/support/lib.sh"
for target in params csv; do
    "$CB_BUILDDIR/tests/fuzz/replay_$target" "$CB_SRCDIR/tests/fuzz/corpus/$target" ||
        fail "the $target fuzz target failed on its corpus"
done
echo "ok"
