# -u/--unalign N: the send and receive buffers start N elements past their
# aligned allocation. Every collective in both placements still verifies
# (3 ranks, four types of 1, 2, 4 and 8 bytes, so that each buffer ends the
# pad's width past where it would have); the pad is in -M's figures; the
# preamble, every CSV row and the JSON parameters say so; a fault in a
# misaligned buffer is still caught (status 7); nccl-collbench-compare never
# matches misaligned rows with aligned ones, and the plot labels them; bad
# values are usage errors (2) naming the value; the health scan notes that
# it keeps aligned buffers. The addresses reaching the library are checked
# through the NCCL stand-in (tests/nccl/nccl_standin_unalign.sh).
. "$CB_SRCDIR/tests/support/lib.sh"
need_mpirun
need_python

run 3 --backend mpi -u 3 -o all -d int8,half,float,double --redop sum,max -r all \
    -b 96 -e 6K -f 4 -n 2 --csv "$CB_TMP/u.csv" --json "$CB_TMP/u.json"
expect_rc 0 "-u 3 over every collective"
check check-sweep --table "$CB_TMP/out" --csv "$CB_TMP/u.csv" --ranks 3 \
    --sizes 96,384,1536,6144 --collective all --dtypes int8,half,float,double \
    --redops sum,max --roots all
has 1 '^# buffers: send and receive start 3 elements past their aligned start (-u)$'
"$CB_PYTHON" - "$CB_TMP/u.csv" "$CB_TMP/u.json" <<'PY' || fail "-u 3: CSV or JSON"
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
assert rows and all(r["unalign"] == "3" for r in rows), {r["unalign"] for r in rows}
assert all(r["wrong"] in ("0", "") for r in rows)
assert json.load(open(sys.argv[2]))["parameters"]["unalign"] == 3
PY

# -M: each buffer grows by N of the widest type selected.
run 2 --backend mpi -u 5 -d int8,double -b 8 -e 64K -n 2 -M
expect_rc 0 "-u 5 -M"
has 1 '^# Memory per rank: send 65576, receive 65576, '
run 2 --backend mpi -u 5 -d int8 -b 8 -e 64K -n 2 -M
expect_rc 0 "-u 5 -d int8 -M"
has 1 '^# Memory per rank: send 65541, receive 65541, '

# Without -u: no preamble line, and unalign 0 in every row.
run 2 --backend mpi -b 1K -e 4K -n 2 --csv "$CB_TMP/a.csv"
expect_rc 0 "without -u"
has 0 '^# buffers:'
awk -F, 'NR == 1 && $54 != "unalign" || NR > 1 && $54 != "0" { exit 1 } END { exit NR < 2 }' \
    "$CB_TMP/a.csv" || fail "without -u: the unalign column is not 0"

# A fault in a misaligned buffer: a rank's output shifted, a contribution missing.
for fault in shift:1:1 missing:2; do
    NCCL_COLLBENCH_TEST_FAULT=$fault CB_RUN_BIN="$CB_BUILDDIR/tests/nccl-collbench-faulty" \
        run 3 --backend faulty-mpi -u 1 -o allreduce,allgather -d float -b 1K -e 4K -n 2
    expect_rc 7 "-u 1 with the fault $fault"
done

# The gate: misaligned rows match misaligned rows only.
run 2 --backend mpi -u 3 -b 1K -e 4K -n 2 --csv "$CB_TMP/u2.csv"
expect_rc 0 "a second -u 3 run"
compare="$CB_BUILDDIR/src/nccl-collbench-compare"
"$compare" -t 90 --metric time "$CB_TMP/u2.csv" "$CB_TMP/u2.csv" >"$CB_TMP/cmp" 2>&1 ||
    { cat "$CB_TMP/cmp"; fail "compare of a -u run with itself"; }
grep -q ' unalign ' "$CB_TMP/cmp" || fail "compare: no unalign key column"
crc=0
"$compare" "$CB_TMP/a.csv" "$CB_TMP/u2.csv" >"$CB_TMP/cmp" 2>&1 || crc=$?
[ "$crc" = 2 ] || { cat "$CB_TMP/cmp"; fail "aligned against -u 3: status $crc, not 2"; }
grep -q 'no row of .* matches' "$CB_TMP/cmp" || fail "aligned against -u 3: $(cat "$CB_TMP/cmp")"
if command -v gnuplot >/dev/null 2>&1; then
    "$CB_BUILDDIR/src/nccl-collbench-plot" -f svg -o "$CB_TMP/plot" "$CB_TMP/a.csv" \
        "$CB_TMP/u2.csv" >/dev/null || fail "plot of an aligned and a -u run"
    grep -q '<title>mpi float sum in-place unalign 3 \[' "$CB_TMP/plot/allreduce-busbw.svg" ||
        fail "plot: no 'unalign 3' line"
fi

# Bad values name themselves; every rank stops with status 2.
for bad in -1 abc 1048577 2.5; do
    run 2 --backend mpi -u "$bad" -b 8 -e 8
    expect_rc 2 "-u $bad"
    grep -q -- "-u: '$bad'" "$CB_TMP/err" || show_and_fail "-u $bad: the message"
done

# The health scan keeps aligned buffers, and says so (one host: the scan
# measures nothing, status 5).
run 2 --backend mpi -o scan -u 2 -b 64K -e 64K -n 2
expect_rc 5 "-o scan -u 2"
has 1 '^# -u has no effect on the health scan: it measures aligned buffers$'
echo "ok"
