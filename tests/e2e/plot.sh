# Charts: one PNG (or SVG) per collective and metric when gnuplot is there;
# a clear message and status 1 when it is not; status 2 for bad input; run
# context, size ticks, overlays, barrier, both formats. (The hostile files
# are in tests/e2e/plot_untrusted.sh.)
. "$CB_SRCDIR/tests/support/lib.sh"
need_mpirun
need_python
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
for args in "-f jpeg $CB_TMP/run.csv" "-f png,gif $CB_TMP/run.csv" "" "--bogus $CB_TMP/run.csv"; do
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
svg="$CB_TMP/charts/allreduce-busbw.svg"
for t in 'mpi float sum out-of-place' 'mpi double sum in-place'; do
    grep -q "$t" "$svg" || fail "line '$t' missing from the chart"
done
# The run, named in a subtitle: ranks, nodes, backend, library, date, run id.
run_id=$(sed -n '2s/^[^,]*,\([0-9a-f]*\),\([^,]*\),.*/\1/p' "$CB_TMP/run.csv")
start=$(sed -n '2s/^[^,]*,[0-9a-f]*,\([^,]*\),.*/\1/p' "$CB_TMP/run.csv")
lib="Open MPI"
[ "$CB_LAUNCHER" = hydra ] && lib=MPICH
for t in "2 ranks, 1 node, mpi, $lib" "$start" "run $run_id"; do
    grep -q "$t" "$svg" || fail "subtitle lacks '$t'"
done
# Size ticks read 1 KiB, 4 KiB, 64 KiB; no '1024' or padded units.
for t in '>1 KiB<' '>4 KiB<' '>64 KiB<'; do
    grep -q "$t" "$svg" || fail "no tick $t"
done
grep -q '>1024<\|   B<' "$svg" && fail "a raw or padded size tick"
# 8 B to 1 GiB (the sizes rewritten, as no run here can reach 1 GiB): ticks
# every 5 powers of two from 1 B, so at 1 KiB, 1 MiB and 1 GiB, and at both ends.
"$CB_PYTHON" - "$CB_TMP/run.csv" "$CB_TMP/gib.csv" <<'PY' || fail "making the 1 GiB file"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
out = []
for e in range(3, 31):
    r = dict(rows[0])
    r["bytes"] = str(1 << e)
    out.append(r)
with open(sys.argv[2], "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
    w.writeheader()
    w.writerows(out)
PY
"$plot" -f svg -o "$CB_TMP/gib" "$CB_TMP/gib.csv" >/dev/null || fail "plot of 8 B to 1 GiB"
ticks=$(grep -o '>[0-9]* [KMGT]*i*B<' "$CB_TMP/gib/allreduce-busbw.svg" | tr -d '<>' |
    paste -sd, -)
[ "$ticks" = "8 B,1 KiB,32 KiB,1 MiB,32 MiB,1 GiB" ] || fail "8 B to 1 GiB: ticks $ticks"

# Both formats at once; every path printed exists and is not empty.
"$plot" -f png,svg -o "$CB_TMP/both" "$CB_TMP/run.csv" >"$CB_TMP/list" || fail "png,svg failed"
[ "$(wc -l <"$CB_TMP/list")" = 4 ] || fail "png,svg: $(cat "$CB_TMP/list")"
while read -r f; do [ -s "$f" ] || fail "$f listed, not written"; done <"$CB_TMP/list"

# Overlays: a second run (another file) is drawn in the same charts with its
# own dash style, its lines named after its file, its run in the subtitle.
run 2 -b 1K -e 64K -f 4 -n 2 --csv "$CB_TMP/second.csv"
expect_rc 0 "the second run"
"$plot" -f svg -o "$CB_TMP/overlay" "$CB_TMP/run.csv" "$CB_TMP/second.csv" >/dev/null ||
    fail "overlay failed"
svg="$CB_TMP/overlay/allreduce-busbw.svg"
for t in 'mpi float sum in-place \[run.csv\]' 'mpi float sum in-place \[second.csv\]' \
         'second.csv: 2 ranks' 'run.csv: 2 ranks'; do
    grep -q "$t" "$svg" || fail "overlay lacks '$t'"
done
# One line style per file: with a third file (the second's copy), every
# line of a file has the same dash and point style, and no two files share one.
cp "$CB_TMP/second.csv" "$CB_TMP/third.csv"
"$plot" -f svg -o "$CB_TMP/overlay3" "$CB_TMP/run.csv" "$CB_TMP/second.csv" "$CB_TMP/third.csv" \
    >/dev/null || fail "overlay of three files failed"
"$CB_PYTHON" - "$CB_TMP/overlay3/allreduce-busbw.svg" <<'PY' || fail "line styles per file"
import re, sys
svg = open(sys.argv[1]).read()
styles = {}
for part in svg.split('<g id="gnuplot_plot_')[1:]:
    title = re.search(r"<title>.*\[(\S+)\]</title>", part).group(1)
    path = re.search(r"<path [^>]*>", part).group(0)
    dash = re.search(r"stroke-dasharray='([^']*)'", path)
    point = re.search(r"xlink:href='#(gpPt\d+)'", part).group(1)
    styles.setdefault(title, set()).add((dash.group(1) if dash else "solid", point))
assert sorted(styles) == ["run.csv", "second.csv", "third.csv"], styles
assert all(len(v) == 1 for v in styles.values()), styles
assert len({next(iter(v)) for v in styles.values()}) == 3, styles
PY

# -o all: barrier (no size, no bandwidth) gets a time chart alone.
run 2 -o all -b 1K -e 4K -n 2 --csv "$CB_TMP/all.csv"
expect_rc 0 "the -o all run"
"$plot" -o "$CB_TMP/all" "$CB_TMP/all.csv" >"$CB_TMP/list" || fail "-o all: plot failed"
grep -qx "$CB_TMP/all/barrier-time.png" "$CB_TMP/list" || fail "no barrier time chart"
grep -q 'barrier-busbw' "$CB_TMP/list" && fail "a barrier bandwidth chart"
while read -r f; do [ -s "$f" ] || fail "$f listed, not written"; done <"$CB_TMP/list"
[ "$(find "$CB_TMP/all" -type f -size 0 | wc -l)" = 0 ] || fail "an empty chart file"

# --split: a line per group; --layout col: a line of its own.
run 4 --split size:2 -b 1K -e 4K -n 2 --csv "$CB_TMP/split.csv"
expect_rc 0 "the --split run"
run 2 -o allgather --layout row,col -b 1K -e 4K -n 2 --csv "$CB_TMP/col.csv"
expect_rc 0 "the --layout run"
"$plot" -f svg -o "$CB_TMP/sc" "$CB_TMP/split.csv" "$CB_TMP/col.csv" >/dev/null || fail "split, col"
for t in 'sum in-place group 0' 'sum in-place group 1'; do
    grep -q "$t" "$CB_TMP/sc/allreduce-busbw.svg" || fail "--split: no line '$t'"
done
grep -q 'none out-of-place col' "$CB_TMP/sc/allgather-busbw.svg" || fail "--layout col: no line"

# The health scan on 2 hosts of 2 ranks: a line per node, pair and rail, not
# their figures averaged by group.
hostid_launcher "a a b b" "$CB_BIN"
CB_RUN_BIN=$CB_TMP/hostid.sh run 4 -o scan -b 64K -e 64K -n 2 --csv "$CB_TMP/scan.csv"
# (8: a loaded machine left a suspect after its re-measure; the rows are there.)
[ "$rc" = 8 ] || expect_rc 0 "the -o scan run"
"$plot" -f svg -o "$CB_TMP/scan" "$CB_TMP/scan.csv" >/dev/null || fail "-o scan: plot failed"
titles=$(grep -o '<title>mpi [^<]*</title>' "$CB_TMP/scan/scan-busbw.svg" | sed 's/.*out-of-place //; s/<.*//' |
    sort)
# A suspect re-measured (a loaded machine) is a line of its own, named as
# the first with " again".
first=$(echo "$titles" | grep -v ' again$' | paste -sd, -)
[ "$first" = "node a,node b,pair a - b,rail 0,rail 1" ] || fail "-o scan: lines $first"
echo "$titles" | grep -v ' again$' >"$CB_TMP/scan-lines"
stray=$(echo "$titles" | sed -n 's/ again$//p' | grep -vxF -f "$CB_TMP/scan-lines" || true)
[ -z "$stray" ] || fail "-o scan: re-measure lines of no line: $stray"

# The NCCL backend (through the CPU stand-in, where it was built) overlaid
# on the MPI run.
standin="$CB_BUILDDIR/tests/nccl-collbench-standin"
if [ -x "$standin" ]; then
    CB_STANDIN_GPUS=2 CB_RUN_BIN=$standin run 2 --backend nccl -b 1K -e 4K -n 2 \
        --csv "$CB_TMP/nccl.csv"
    expect_rc 0 "the NCCL stand-in run"
    "$plot" -f svg -o "$CB_TMP/nccl" "$CB_TMP/nccl.csv" "$CB_TMP/run.csv" >/dev/null ||
        fail "nccl and mpi"
    for t in 'nccl float sum in-place \[nccl.csv\]' 'mpi float sum in-place \[run.csv\]'; do
        grep -q "$t" "$CB_TMP/nccl/allreduce-busbw.svg" || fail "nccl and mpi: no line '$t'"
    done
    # Every collective on NCCL, with barrier, --split and --layout col: a
    # chart for each (barrier's time alone), none empty.
    CB_STANDIN_GPUS=4 CB_RUN_BIN=$standin run 4 --backend nccl -o all --split size:2 \
        --layout row,col -b 1K -e 4K -n 2 --csv "$CB_TMP/nccl-all.csv"
    expect_rc 0 "the NCCL stand-in run of -o all"
    "$plot" -o "$CB_TMP/nccl-all" "$CB_TMP/nccl-all.csv" >"$CB_TMP/list" ||
        fail "NCCL -o all --split --layout: plot failed"
    for c in $("$CB_PYTHON" -c 'import csv, sys
print(" ".join(sorted({r["collective"] for r in csv.DictReader(open(sys.argv[1]))})))' \
        "$CB_TMP/nccl-all.csv"); do
        grep -qx "$CB_TMP/nccl-all/$c-time.png" "$CB_TMP/list" || fail "NCCL: no $c time chart"
        [ "$c" = barrier ] ||
            grep -qx "$CB_TMP/nccl-all/$c-busbw.png" "$CB_TMP/list" || fail "NCCL: no $c busbw chart"
    done
    while read -r f; do [ -s "$f" ] || fail "$f listed, not written"; done <"$CB_TMP/list"
fi

# One rank: no bandwidth, so the time chart only.
run 1 -b 1K -e 4K -n 2 --csv "$CB_TMP/one.csv"
expect_rc 0 "the one-rank run"
"$plot" -o "$CB_TMP/one" "$CB_TMP/one.csv" >"$CB_TMP/list" || fail "one rank: plot failed"
[ "$(cat "$CB_TMP/list")" = "$CB_TMP/one/allreduce-time.png" ] || fail "one rank: $(cat "$CB_TMP/list")"
echo "ok"
