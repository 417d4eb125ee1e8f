# alltoallv on the MPI backend with each traffic matrix (--a2av-matrix) at 1,
# 3 and 4 ranks, on sizes that do not divide evenly: verified with zero
# wrong elements, out of place only (the in-place half is N/A and a note
# says why), the size column the busiest rank's bytes as an independent
# model of the matrix (tests/support/parse_output.py) computes it, busbw =
# algbw (n-1)/n, the matrix in the CSV and the JSON. Uniform alltoallv at a
# size moves what alltoall moves; a random matrix has zero counts and
# differs from uniform; a hot one is skewed by K. Bad specs are usage
# errors (status 2) naming the value.
. "$CB_SRCDIR/tests/support/lib.sh"
need_mpirun
need_python

sizes=5,15,45,135,405,1215,3645
for np in 1 3 4; do
    for matrix in uniform random random:11 hot:4 hot:3:2; do
        run "$np" -o alltoallv --a2av-matrix "$matrix" -d float,int8,half -b 5 -e 4K -f 3 \
            -n 1 -w 0 -c 1 --csv "$CB_TMP/v.csv"
        expect_rc 0 "alltoallv $matrix on $np ranks"
        check check-sweep --table "$CB_TMP/out" --csv "$CB_TMP/v.csv" --ranks "$np" \
            --sizes "$sizes" --collective alltoallv --dtypes float,int8,half \
            --a2av-matrix "$matrix"
        has 1 "^# alltoallv: traffic matrix .* (--a2av-matrix); size = the busiest rank's bytes sent or received; out of place only\$"
    done
done

# The matrix as written out, in the table's note, the CSV and the JSON.
run 3 -o alltoallv --a2av-matrix hot:4 -b 4K -e 4K -n 1 --json "$CB_TMP/h.json" \
    --csv "$CB_TMP/h.csv"
expect_rc 0 "hot:4 with JSON"
has 1 '^# alltoallv: traffic matrix hot:4:1 '
"$CB_PYTHON" - "$CB_TMP/h.json" "$CB_TMP/h.csv" <<'PY' || fail "the matrix in the JSON or CSV"
import csv, json, sys
doc = json.load(open(sys.argv[1]))
rows = list(csv.DictReader(open(sys.argv[2], newline="")))
assert [r["traffic_matrix"] for r in doc["results"]] == ["hot:4:1"], doc["results"]
assert [r["traffic_matrix"] for r in rows] == ["hot:4:1"], rows
# 3 ranks, rank 0 hot: its column weighs 3 x 4 = 12, every row 4 + 2 = 6;
# 4 KiB of floats is 1024 elements, 85 per unit: the busiest (rank 0)
# receives 12 x 85 floats, and bytes = that.
assert rows[0]["bytes"] == str(12 * 85 * 4) and rows[0]["count"] == "85", rows[0]
assert rows[0]["placement"] == "out-of-place"
PY

# Other collectives carry no matrix.
run 2 -o alltoall,alltoallv -d float,int64 -b 8 -e 64K -f 8 -n 1 --csv "$CB_TMP/u.csv" \
    --json "$CB_TMP/u.json"
expect_rc 0 "alltoall beside uniform alltoallv"
"$CB_PYTHON" - "$CB_TMP/u.csv" "$CB_TMP/u.json" <<'PY' || fail "uniform alltoallv is not alltoall's traffic"
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
doc = json.load(open(sys.argv[2]))
a = [(r["datatype"], r["bytes"], r["count"]) for r in rows
     if r["collective"] == "alltoall" and r["placement"] == "out-of-place"]
v = [(r["datatype"], r["bytes"], r["count"]) for r in rows if r["collective"] == "alltoallv"]
assert a == v and len(v) == 9, (a, v)
assert all(r["traffic_matrix"] == "" for r in rows if r["collective"] == "alltoall")
assert all(r["traffic_matrix"] is None for r in doc["results"] if r["collective"] == "alltoall")
PY

# A random matrix is not uniform and not the same for another seed; the size
# column follows the seed (the model checks the value itself above).
run 4 -o alltoallv --a2av-matrix random:1 -b 64K -e 64K -n 1 --csv "$CB_TMP/r1.csv"
expect_rc 0 "random:1"
run 4 -o alltoallv --a2av-matrix random:2 -b 64K -e 64K -n 1 --csv "$CB_TMP/r2.csv"
expect_rc 0 "random:2"
"$CB_PYTHON" - "$CB_TMP/r1.csv" "$CB_TMP/r2.csv" <<'PY' || fail "random matrices by seed"
import csv, sys
one, two = (list(csv.DictReader(open(p, newline="")))[0] for p in sys.argv[1:])
assert one["count"] != two["count"], (one["count"], two["count"])
assert int(one["count"]) != 16384 // 4, one["count"]   # uniform: 16384 floats / 4 ranks
PY

# Bad specs: status 2 on every rank, one message naming the value.
for bad in bogus random:x random:-1 random:7K random: hot hot: hot:0 hot:1001 hot:4:0 \
           hot:4:x hot:4:1:1 uniform:3; do
    run 3 -o alltoallv --a2av-matrix "$bad" -b 1K -e 1K -n 1
    expect_rc 2 "--a2av-matrix $bad"
    n=$(grep -c '^nccl-collbench: ' "$CB_TMP/err" || true)
    [ "$n" = 1 ] || show_and_fail "--a2av-matrix $bad: $n messages, expected 1"
    grep '^nccl-collbench: ' "$CB_TMP/err" | grep -qF -- "--a2av-matrix: '$bad'" ||
        show_and_fail "--a2av-matrix $bad: the message does not name the value"
done
echo "ok"
