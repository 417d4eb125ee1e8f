# Charts: one PNG (or SVG) per collective and metric when gnuplot is there;
# a clear message and status 1 when it is not; status 2 for bad input.
. "$CB_SRCDIR/tests/lib.sh"
need_mpirun
plot="$CB_BUILDDIR/src/nccl-collbench-plot"

run 2 -b 1K -e 64K -f 4 -n 2 -d float,double --csv "$CB_TMP/run.csv"
expect_rc 0 "the run to chart"

# Without gnuplot on PATH: status 1 and a message saying what to install.
got=0
PATH=/nonexistent "$plot" -o "$CB_TMP/none" "$CB_TMP/run.csv" 2>"$CB_TMP/err" || got=$?
[ "$got" = 1 ] || fail "without gnuplot: exit $got, expected 1"
grep -q 'gnuplot not found' "$CB_TMP/err" || fail "without gnuplot: $(cat "$CB_TMP/err")"
[ -e "$CB_TMP/none" ] && fail "without gnuplot, the output folder was still made"

# Usage errors are found before gnuplot is looked for.
for args in "-f jpeg $CB_TMP/run.csv" "" "--bogus $CB_TMP/run.csv" "$CB_TMP/run.csv extra"; do
    got=0
    # shellcheck disable=SC2086
    "$plot" $args >/dev/null 2>"$CB_TMP/err" || got=$?
    [ "$got" = 2 ] || fail "'$args': exit $got, expected 2"
    grep -q "^nccl-collbench-plot: " "$CB_TMP/err" || fail "'$args': no message"
done

command -v gnuplot >/dev/null 2>&1 || skip "gnuplot is not installed, so no chart can be drawn (the rest passed)"

got=0
"$plot" -o "$CB_TMP/charts" "$CB_TMP/missing.csv" 2>"$CB_TMP/err" || got=$?
[ "$got" = 2 ] && grep -q 'missing.csv' "$CB_TMP/err" || fail "a missing CSV file: exit $got"
printf 'collective,bytes\nallreduce,8\n' >"$CB_TMP/other.csv"
got=0
"$plot" -o "$CB_TMP/charts" "$CB_TMP/other.csv" 2>"$CB_TMP/err" || got=$?
[ "$got" = 2 ] || fail "a CSV file of another kind: exit $got"

"$plot" -o "$CB_TMP/charts" "$CB_TMP/run.csv" >"$CB_TMP/list" || fail "plot failed"
for f in allreduce-busbw.png allreduce-time.png; do
    grep -qx "$CB_TMP/charts/$f" "$CB_TMP/list" || fail "$f not listed"
    [ -s "$CB_TMP/charts/$f" ] || fail "$f not written"
    head -c 8 "$CB_TMP/charts/$f" | od -An -c | grep -q 'P   N   G' || fail "$f is not a PNG"
done
"$plot" -f svg -o "$CB_TMP/charts" "$CB_TMP/run.csv" >/dev/null || fail "svg plot failed"
grep -q '<svg' "$CB_TMP/charts/allreduce-busbw.svg" || fail "not an SVG"
# One line per datatype and placement: four titles in the chart.
for t in 'mpi float sum out-of-place' 'mpi double sum in-place'; do
    grep -q "$t" "$CB_TMP/charts/allreduce-busbw.svg" || fail "line '$t' missing from the chart"
done
echo "ok"
