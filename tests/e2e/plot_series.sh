# nccl-collbench-plot keeps many lines apart (colour, then marker, then
# dash: read back from gnuplot's SVG) and --series draws only the lines it
# names; a pattern that names none is a usage error (status 2).
. "$CB_SRCDIR/tests/support/lib.sh"
need_mpirun
need_python
plot="$CB_BUILDDIR/src/nccl-collbench-plot"
command -v gnuplot >/dev/null 2>&1 || skip "gnuplot is not installed, so no chart can be drawn"

# Every datatype, two reductions, both placements: dozens of lines.
run 2 -d all --redop sum,max -b 1K -e 4K -n 1 -w 0 --csv "$CB_TMP/many.csv"
expect_rc 0 "the run of many series"
"$plot" -f svg -o "$CB_TMP/all" "$CB_TMP/many.csv" >/dev/null || fail "plot of many series"

# looks SVG: each line of the chart as "label|colour|dash|marker", one a line.
looks() {
    "$CB_PYTHON" - "$1" <<'PY'
import re, sys
svg = open(sys.argv[1], encoding="utf-8").read()
parts = re.split(r'<g id="gnuplot_plot_\d+" >', svg)[1:]
for part in parts:
    title = re.search(r"<title>(.*?)</title>", part).group(1)
    path = re.search(r"<path stroke='([^']*)'([^>]*)", part)
    dash = re.search(r"stroke-dasharray='([^']*)'", path.group(2)) if path else None
    marker = re.search(r"xlink:href='#(gpPt\d+)'", part)
    print("%s|%s|%s|%s" % (title, path.group(1).replace(" ", "") if path else "",
                           dash.group(1) if dash else "", marker.group(1) if marker else ""))
PY
}
looks "$CB_TMP/all/allreduce-busbw.svg" >"$CB_TMP/looks"
n=$(wc -l <"$CB_TMP/looks")
[ "$n" -gt 16 ] || fail "only $n lines in the chart of many series"
dupes=$(cut -d'|' -f2- "$CB_TMP/looks" | sort | uniq -d)
[ -z "$dupes" ] || fail "$n lines, and some look alike ($dupes): $(cat "$CB_TMP/looks")"

# --series: only the lines it names, in both charts.
"$plot" -f svg -o "$CB_TMP/some" --series '*float sum*,mpi half max in-place' "$CB_TMP/many.csv" \
    >/dev/null || fail "plot --series"
for kind in busbw time; do
    looks "$CB_TMP/some/allreduce-$kind.svg" | cut -d'|' -f1 | sort >"$CB_TMP/kept"
    printf 'mpi float sum in-place\nmpi float sum out-of-place\nmpi half max in-place\n' >"$CB_TMP/want"
    cmp -s "$CB_TMP/kept" "$CB_TMP/want" || fail "--series, $kind: $(cat "$CB_TMP/kept")"
done

# A pattern that names no line, or an empty one: status 2, named.
for series in '*float*,*nothing*' '' '*float*,'; do
    got=0
    "$plot" -f svg -o "$CB_TMP/none" --series "$series" "$CB_TMP/many.csv" >/dev/null \
        2>"$CB_TMP/err" || got=$?
    [ "$got" = 2 ] || fail "--series '$series': status $got, expected 2"
    grep -q '^nccl-collbench-plot: --series' "$CB_TMP/err" || fail "--series '$series': $(cat "$CB_TMP/err")"
done
echo "ok"
