# The table keeps nccl-tests' shape that log parsers count on: 13
# whitespace-separated fields in every data row (barrier and column layout
# included; N/A where a half is not measured, the matrix on a comment
# line), and with --split two more at the end, the group and its host; a
# redop column wide enough for premulsum, no trailing blanks; the table
# ends with the Result line; and --stats prints a p99 only from 100
# samples on.
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
bad = [l for l in rows if len(l.split()) != 15]
assert not bad, "--split rows without 15 fields: %r" % bad[:3]
trailing = [l for l in lines if l != l.rstrip()]
assert not trailing, "trailing blanks: %r" % trailing[:3]
# Every header's columns line up with the rows: each right-aligned header
# name ends where its column's cells end.
header = next(l for l in lines if l.startswith("#") and "redop" in l and "busbw" in l)
# The host, last, is left-aligned: it starts where its name starts.
ends = [m.end() for m in re.finditer(r"\S+", header)][1:-1]
host_at = [m.start() for m in re.finditer(r"\S+", header)][-1]
for l in rows:
    cells = list(re.finditer(r"\S+", l))
    assert [m.end() for m in cells[:-1]] == ends and cells[-1].start() == host_at, \
        "misaligned: %r\n%r" % (l, header)
premul = [l for l in rows if l.split()[3] == "premulsum"]
assert premul, "no premulsum rows"
barrier = [l for l in rows if l.split()[0] == "0"]
assert len(barrier) == 2 and all(l.split()[9:13] == ["N/A"] * 4 for l in barrier), barrier
# Each row's group and host are its last fields (every group on this
# machine); in column layout its matrix is on the comment line under it.
for i, l in enumerate(lines):
    if l.startswith("#"):
        continue
    assert l.split()[13] in ("0", "1") and l.split()[14] != "-", l
    assert re.match(r"^#   matrix \d+ x \d+$", lines[i + 1]) or not lines[i + 1].startswith("#   m"), \
        (l, lines[i + 1])
# Column layout rows are out of place only: N/A in the in-place half.
col = [l for i, l in enumerate(lines) if not l.startswith("#") and "matrix" in lines[i + 1]]
assert col and all(l.split()[9:13] == ["N/A"] * 4 for l in col), col[:2]
assert lines[-1].startswith("# Result: PASS "), lines[-1]
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
