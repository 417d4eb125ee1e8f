# Charts from hostile or unusable CSV files: no text of a file runs as
# gnuplot or shell code; unusable data exits 2; bad values are named by
# file, line and column; a failing gnuplot leaves no chart listed or empty.
. "$CB_SRCDIR/tests/support/lib.sh"
need_mpirun
need_python
plot="$CB_BUILDDIR/src/nccl-collbench-plot"
command -v gnuplot >/dev/null 2>&1 || skip "gnuplot is not installed, so no chart can be drawn"

run 2 -b 1K -e 16K -f 4 -n 2 --csv "$CB_TMP/run.csv"
expect_rc 0 "the run"

# edit OUT KIND: a copy of run.csv with text or values changed.
edit() {
    "$CB_PYTHON" - "$CB_TMP/run.csv" "$CB_TMP/$1" "$2" "$CB_TMP/MARKER" <<'PY' || fail "edit $*"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
kind, marker = sys.argv[3], sys.argv[4]
for i, r in enumerate(rows):
    if kind == "inject":
        # Each field that reaches a title or subtitle tries a way out of a
        # gnuplot string: a line break, quotes, a backquote, a macro.
        cmd = 'system("touch %s")' % marker
        r["datatype"] = "float\n%s\n#" % cmd
        r["redop"] = "sum'\n%s\n'" % cmd
        r["placement"] = 'x"\n%s\n"' % cmd
        r["library"] = "lib`touch %s`" % marker
        r["backend"] = "mpi@touch"
        r["run_id"] = "\n!touch %s\n" % marker
    elif kind == "nan":
        r["busbw_gbps"] = r["time_us"] = ["nan", "inf", "-inf"][i % 3]
    elif kind == "somenan" and i == 1:
        r["busbw_gbps"] = "nan"
    elif kind == "word" and i == 2:
        r["time_us"] = "fast"
with open(sys.argv[2], "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
    w.writeheader()
    w.writerows(rows)
PY
}

# A CSV whose text would run "touch MARKER" if it reached gnuplot as code.
edit inject.csv inject
got=0
"$plot" -f png,svg -o "$CB_TMP/inject" "$CB_TMP/inject.csv" >"$CB_TMP/list" 2>"$CB_TMP/err" || got=$?
[ ! -e "$CB_TMP/MARKER" ] || fail "text from the CSV file ran as code"
[ "$got" = 0 ] || fail "inject: exit $got: $(cat "$CB_TMP/err")"
[ "$(wc -l <"$CB_TMP/list")" = 4 ] || fail "inject: $(cat "$CB_TMP/list")"
# The text is shown, with the dangerous characters replaced.
grep -q 'float?system(?touch' "$CB_TMP/inject/allreduce-busbw.svg" || fail "the label was not shown"

# All values NaN or infinite: unusable data, status 2, nothing written.
edit nan.csv nan
got=0
"$plot" -o "$CB_TMP/nan" "$CB_TMP/nan.csv" >"$CB_TMP/list" 2>"$CB_TMP/err" || got=$?
[ "$got" = 2 ] || fail "all NaN: exit $got, expected 2"
grep -q 'no usable data' "$CB_TMP/err" || fail "all NaN: $(cat "$CB_TMP/err")"
[ -s "$CB_TMP/list" ] && fail "all NaN: paths printed"
[ -z "$(ls -A "$CB_TMP/nan" 2>/dev/null)" ] || fail "all NaN: files written"

# Some NaN: skipped with a warning; the rest is charted.
edit somenan.csv somenan
"$plot" -o "$CB_TMP/somenan" "$CB_TMP/somenan.csv" >"$CB_TMP/list" 2>"$CB_TMP/err" ||
    fail "some NaN: $(cat "$CB_TMP/err")"
grep -q 'skipped 1 value' "$CB_TMP/err" || fail "some NaN: no warning"

# A word where a number belongs: status 2 naming file, line and column.
edit word.csv word
got=0
"$plot" -o "$CB_TMP/word" "$CB_TMP/word.csv" 2>"$CB_TMP/err" || got=$?
[ "$got" = 2 ] || fail "a word for a time: exit $got"
grep -q "word.csv:4: column time_us (21): 'fast'" "$CB_TMP/err" || fail "word: $(cat "$CB_TMP/err")"

# A gnuplot that fails without writing: status 1, no path printed, no file.
mkdir -p "$CB_TMP/bin"
printf '#!/bin/sh\necho "gnuplot: broken" >&2\nexit 1\n' >"$CB_TMP/bin/gnuplot"
chmod +x "$CB_TMP/bin/gnuplot"
got=0
PATH="$CB_TMP/bin:$PATH" "$plot" -o "$CB_TMP/broken" "$CB_TMP/run.csv" >"$CB_TMP/list" \
    2>"$CB_TMP/err" || got=$?
[ "$got" = 1 ] || fail "failing gnuplot: exit $got, expected 1"
[ -s "$CB_TMP/list" ] && fail "failing gnuplot: paths printed: $(cat "$CB_TMP/list")"
[ "$(find "$CB_TMP/broken" -type f | wc -l)" = 0 ] || fail "failing gnuplot: files left"

# A gnuplot that leaves an empty file: not listed, removed, status 1.
printf '#!/bin/sh\nexit 0\n' >"$CB_TMP/bin/gnuplot"
: >"$CB_TMP/broken/allreduce-busbw.png"   # from "an earlier run": must not pass for new
got=0
PATH="$CB_TMP/bin:$PATH" "$plot" -o "$CB_TMP/broken" "$CB_TMP/run.csv" >"$CB_TMP/list" \
    2>"$CB_TMP/err" || got=$?
[ "$got" = 1 ] || fail "silent gnuplot: exit $got, expected 1"
[ -s "$CB_TMP/list" ] && fail "silent gnuplot: paths printed"
grep -q 'did not write' "$CB_TMP/err" || fail "silent gnuplot: $(cat "$CB_TMP/err")"
[ "$(find "$CB_TMP/broken" -type f | wc -l)" = 0 ] || fail "silent gnuplot: files left"
echo "ok"
