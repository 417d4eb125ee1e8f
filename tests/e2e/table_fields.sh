# The table keeps nccl-tests' shape that log parsers count on: 13
# whitespace-separated fields in every data row (barrier, column layout and
# --split included; N/A where a half is not measured, the group and matrix
# on a comment line), a redop column wide enough for premulsum, no trailing
# blanks; and --stats prints a p99 only from 100 samples on.
. "$CB_SRCDIR/tests/support/lib.sh"
need_mpirun
need_python

run 4 -o barrier,allreduce,allgather --layout row,col --split size:2 --redop sum,premulsum \
    -b 1K -e 2K -n 3 -w 1 --stats
expect_rc 0 "barrier, column layout, --split and premulsum"
"$CB_PYTHON" - "$CB_TMP/out" <<'PY' || show_and_fail "table shape"
import re, sys
lines = open(sys.argv[1]).read().splitlines()
rows = [l for l in lines if not l.startswith("#")]
assert rows, "no data rows"
bad = [l for l in rows if len(l.split()) != 13]
assert not bad, "rows without 13 fields: %r" % bad[:3]
trailing = [l for l in lines if l != l.rstrip()]
assert not trailing, "trailing blanks: %r" % trailing[:3]
# Every header's columns line up with the rows: each right-aligned header
# name ends where its column's cells end.
header = next(l for l in lines if l.startswith("#") and "redop" in l and "busbw" in l)
ends = [m.end() for m in re.finditer(r"\S+", header)][1:]
for l in rows:
    assert [m.end() for m in re.finditer(r"\S+", l)] == ends, "misaligned: %r\n%r" % (l, header)
premul = [l for l in rows if l.split()[3] == "premulsum"]
assert premul, "no premulsum rows"
barrier = [l for l in rows if l.split()[0] == "0"]
assert len(barrier) == 2 and all(l.split()[9:] == ["N/A"] * 4 for l in barrier), barrier
# Each row's group (and in column layout its matrix) on the comment line under it.
for i, l in enumerate(lines):
    if l.startswith("#"):
        continue
    extras = lines[i + 1]
    assert re.match(r"^#   group [01](  matrix \d+ x \d+)?$", extras), (l, extras)
# Column layout rows are out of place only: N/A in the in-place half.
col = [l for i, l in enumerate(lines) if not l.startswith("#") and "matrix" in lines[i + 1]]
assert col and all(l.split()[9:] == ["N/A"] * 4 for l in col), col[:2]
PY
check check-sweep --table "$CB_TMP/out" --ranks 4 --sizes 1024,2048 \
    --collective barrier,allreduce,allgather --redops sum,premulsum --group-sizes 2,2 \
    --layout row,col

# --stats: no p99 from a handful of samples; a p99 from 100.
run 2 -o allreduce -b 1K -e 1K -n 5 --stats
expect_rc 0 "--stats at -n 5"
has 2 '^#   [a-z-]* *per-iteration (us) min [0-9.]* median [0-9.]* max '
has 0 ' p99 '
run 2 -o allreduce -b 1M -e 1M -n 100 -w 2 --stats --csv "$CB_TMP/s.csv"
expect_rc 0 "--stats at -n 100"
has 2 '^#   [a-z-]* *per-iteration (us) min [0-9.]* median [0-9.]* p99 [0-9.]* max .*(100 samples'
"$CB_PYTHON" - "$CB_TMP/s.csv" <<'PY' || fail "no p99 in the CSV from 100 samples"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
assert len(rows) == 2 and all(r["iter_samples"] == "100" and float(r["iter_p99_us"]) > 0
                              for r in rows), rows
PY
echo "ok"
