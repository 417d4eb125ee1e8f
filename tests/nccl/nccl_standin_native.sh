# NCCL 2.28's own alltoall, gather and scatter against the grouped sends and
# receives (--nccl-impl), through the CPU stand-in: native at 2.28 and
# send/receive groups below it (by the stand-in's trace), both verified;
# both in one run, told apart by the CSV's and the JSON's impl; an explicit
# native on an older library refused before anything is measured; ranks
# whose libraries disagree refused; native in place, under -m and -G.
. "$CB_SRCDIR/tests/support/lib.sh"
. "$CB_SRCDIR/tests/nccl/standin/lib.sh"
standin_setup 4 python trace
ops=alltoall,gather,scatter
sizes=48,192,768

# calls P NAME: how many calls of NAME moving more than one element the
# trace of rank 0 holds (the backend's warmup moves one).
calls() {
    awk -v name="$1" '$1 == name { split($2, c, "="); if (c[2] + 0 > 1) n++ } END { print n + 0 }' \
        "$CB_TMP/trace.0"
}

# impl_column FILE: the impl values of the CSV's rows, sorted and unique.
impl_column() {
    "$CB_PYTHON" -c 'import csv, sys
print(",".join(sorted({r["impl"] for r in csv.DictReader(open(sys.argv[1]))})))' "$1"
}

# At the header's version (2.28.9) auto runs the native calls, verified.
for np in 2 3; do
    fresh_trace
    run "$np" --backend nccl -o "$ops" -d float,int8 -r all -b 48 -e 768 -f 4 -n 2 -c 2 \
        --csv "$CB_TMP/auto.csv"
    expect_rc 0 "auto at 2.28 on $np ranks"
    check check-sweep --table "$CB_TMP/out" --csv "$CB_TMP/auto.csv" --ranks "$np" \
        --sizes "$sizes" --collective "$ops" --dtypes float,int8 --roots all --passes 2
    standin_check trace --prefix "$CB_TMP/trace" --ranks "$np" --teardown destroy
    [ "$(impl_column "$CB_TMP/auto.csv")" = native ] ||
        show_and_fail "impl column at 2.28: $(impl_column "$CB_TMP/auto.csv"), expected native"
    grep -q '^# alltoall, gather and scatter run as native (auto)$' "$CB_TMP/out" ||
        show_and_fail "the preamble does not say auto runs native"
    for name in ncclAlltoAll ncclGather ncclScatter; do
        [ "$(calls "$name")" -gt 0 ] || show_and_fail "no $name in the trace at 2.28"
    done
    [ "$(calls ncclSend)" = 0 ] && [ "$(calls ncclRecv)" = 0 ] ||
        show_and_fail "ncclSend or ncclRecv of a measured size at 2.28 under auto"
done
echo "ok: native at 2.28"

# Below 2.28 auto runs send/receive groups and never calls the native
# entry points (the stand-in would record a VIOLATION), not even to warm up.
CB_STANDIN_NCCL_VERSION=22703
export CB_STANDIN_NCCL_VERSION
fresh_trace
run 3 --backend nccl -o "$ops" -d float,int8 -r all -b 48 -e 768 -f 4 -n 2 -c 2 \
    --csv "$CB_TMP/old.csv"
expect_rc 0 "auto at 2.27.3"
check check-sweep --table "$CB_TMP/out" --csv "$CB_TMP/old.csv" --ranks 3 \
    --sizes "$sizes" --collective "$ops" --dtypes float,int8 --roots all --passes 2
standin_check trace --prefix "$CB_TMP/trace" --ranks 3 --teardown destroy \
    --count ncclAlltoAll=0 --count ncclGather=0 --count ncclScatter=0
[ "$(impl_column "$CB_TMP/old.csv")" = p2p ] || show_and_fail "impl column at 2.27.3 is not p2p"
grep -q '^# alltoall, gather and scatter run as p2p (auto)$' "$CB_TMP/out" ||
    show_and_fail "the preamble does not say auto runs p2p"
[ "$(calls ncclSend)" -gt 0 ] || show_and_fail "no ncclSend at 2.27.3"
echo "ok: send/receive groups at 2.27.3"

# An explicit native on that library: status 1 before anything is measured.
fresh_trace
run 2 --backend nccl -o allreduce,alltoall --nccl-impl p2p,native -b 48 -e 48 -n 1
expect_rc 1 "--nccl-impl native at 2.27.3"
one_message "--nccl-impl native: the NCCL library loaded is 2.27.3, which has no ncclAlltoAll"
grep -q 'Collective:' "$CB_TMP/out" && show_and_fail "something was measured before the error"
standin_check trace --prefix "$CB_TMP/trace" --ranks 2 --teardown abort
echo "ok: explicit native refused at 2.27.3"

# Ranks whose libraries disagree (rank 1 on 2.27.3, rank 0 on 2.28.9)
# cannot run one collective two ways: refused, also under auto.
unset CB_STANDIN_NCCL_VERSION
cat >"$CB_TMP/rank.sh" <<SH
#!/bin/sh
[ "\${OMPI_COMM_WORLD_RANK:-\${PMI_RANK:-\${PMIX_RANK:-x}}}" = 1 ] &&
    CB_STANDIN_NCCL_VERSION=22703 && export CB_STANDIN_NCCL_VERSION
exec "$CB_STANDIN_BIN" "\$@"
SH
chmod +x "$CB_TMP/rank.sh"
CB_RUN_BIN="$CB_TMP/rank.sh" run 2 --backend nccl -o alltoall -b 48 -e 48 -n 1
if grep -q 'NCCL 2.27.3' "$CB_TMP/out" "$CB_TMP/err" || [ "$rc" != 0 ]; then
    expect_rc 1 "ranks on 2.28.9 and 2.27.3"
    one_message "some ranks' NCCL has its native alltoall, gather and scatter and others' has not"
    echo "ok: ranks on different libraries refused"
else
    echo "note: the launcher does not say which rank is which; mixed libraries not checked"
fi

# Both in one run, side by side: the same rows once per implementation,
# each verified, told apart by impl in the CSV and the JSON.
fresh_trace
run 3 --backend nccl -o "$ops" -d float -r 1 -b 48 -e 768 -f 4 -n 2 -c 1 \
    --nccl-impl native,p2p --csv "$CB_TMP/both.csv" --json "$CB_TMP/both.json"
expect_rc 0 "--nccl-impl native,p2p"
standin_check trace --prefix "$CB_TMP/trace" --ranks 3 --teardown destroy
# The table keeps 13 fields in every data row (impl on a note line), no
# trailing blanks; the JSON has no "" and rounded floats.
awk '!/^#/ && NF != 13 || / $/' "$CB_TMP/out" | grep -q . &&
    show_and_fail "--nccl-impl native,p2p: a row without 13 fields or with trailing blanks"
check check-json-values --json "$CB_TMP/both.json"
[ "$(calls ncclAlltoAll)" -gt 0 ] && [ "$(calls ncclSend)" -gt 0 ] ||
    show_and_fail "native,p2p did not run both kinds of call"
for name in alltoall gather scatter; do
    has 1 "^# $name runs as native (--nccl-impl)$"
    has 1 "^# $name runs as p2p (--nccl-impl)$"
done
"$CB_PYTHON" - "$CB_TMP/both.csv" "$CB_TMP/both.json" <<'PY' || show_and_fail "both in one run"
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
doc = json.load(open(sys.argv[2]))
assert "impl" in rows[0], list(rows[0].keys())
assert doc["parameters"]["nccl_impls"] == ["native", "p2p"], doc["parameters"]["nccl_impls"]
key = lambda r: (r["datatype"], r["root"], r["bytes"], r["placement"])
for coll in ("alltoall", "gather", "scatter"):
    mine = [r for r in rows if r["collective"] == coll]
    native = [key(r) for r in mine if r["impl"] == "native"]
    p2p = [key(r) for r in mine if r["impl"] == "p2p"]
    assert native and native == p2p, (coll, native, p2p)
    assert all(r["wrong"] == "0" and r["check_passes"] == "1" for r in mine), coll
    assert len(mine) == len(native) + len(p2p), coll
res = doc["results"]
assert len(res) == len(rows), (len(res), len(rows))
assert [x["impl"] for x in res] == [r["impl"] for r in rows]
PY
# nccl-collbench-compare keeps the two apart: impl is one of its keys.
"$CB_BUILDDIR/src/nccl-collbench-compare" "$CB_TMP/both.csv" "$CB_TMP/both.csv" \
    --json "$CB_TMP/cmp.json" >"$CB_TMP/cmp.out" 2>&1 || show_and_fail "compare: $(cat "$CB_TMP/cmp.out")"
"$CB_PYTHON" - "$CB_TMP/both.csv" "$CB_TMP/cmp.json" <<'PY' || show_and_fail "compare keys"
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
report = json.load(open(sys.argv[2]))["rows"]
assert len(report) == len(rows), (len(report), len(rows))
assert sorted(r["impl"] for r in report) == sorted(r["impl"] for r in rows)
PY
# nccl-collbench-plot draws them as lines of their own (where gnuplot is).
if command -v gnuplot >/dev/null 2>&1; then
    "$CB_BUILDDIR/src/nccl-collbench-plot" -f svg -o "$CB_TMP/charts" "$CB_TMP/both.csv" \
        >/dev/null || show_and_fail "plot of native,p2p failed"
    for t in 'nccl float none out-of-place native' 'nccl float none out-of-place p2p'; do
        grep -q "$t" "$CB_TMP/charts/alltoall-busbw.svg" || show_and_fail "no plot line '$t'"
    done
else
    echo "note: gnuplot is not installed; the chart's lines per implementation not checked"
fi
echo "ok: native and p2p side by side"

# With --split, rank 0 prints every group's rows: each says its implementation.
run 4 --backend nccl --split size:3 -o alltoall,gather -b 48 -e 768 -f 4 -n 1 \
    --nccl-impl native,p2p --csv "$CB_TMP/split.csv"
expect_rc 0 "--nccl-impl native,p2p with --split"
"$CB_PYTHON" - "$CB_TMP/split.csv" <<'PY' || show_and_fail "--split rows and their impl"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
got = {(r["collective"], r["impl"], r["group"]) for r in rows}
assert got == {(c, i, g) for c in ("alltoall", "gather") for i in ("native", "p2p")
               for g in ("0", "1")}, got
assert all(r["wrong"] == "0" for r in rows)
PY
echo "ok: --split"

# Native in place through the scratch buffer, inside the engine's group
# (-m), captured in a graph (-G), and with a scratch buffer too small for
# the whole input (rounds of sends and receives): verified, no violation.
for opts in "-m 3" "-G 2 -w 0" "-m 2 -G 2 -w 0"; do
    fresh_trace
    # shellcheck disable=SC2086
    run 3 --backend nccl -o "$ops" -d int64,half -r all -b 48 -e 768 -f 4 -n 2 -c 2 \
        --nccl-impl native $opts --csv "$CB_TMP/o.csv"
    expect_rc 0 "native with $opts"
    check check-sweep --table "$CB_TMP/out" --csv "$CB_TMP/o.csv" --ranks 3 --sizes "$sizes" \
        --collective "$ops" --dtypes int64,half --roots all --passes 2
    standin_check trace --prefix "$CB_TMP/trace" --ranks 3 --teardown destroy
done
NCCL_COLLBENCH_TEST_SCRATCH_BYTES=24
export NCCL_COLLBENCH_TEST_SCRATCH_BYTES
fresh_trace
run 3 --backend nccl -o alltoall -d int64 -b 48 -e 768 -f 4 -n 2 -c 2 -m 2 --nccl-impl native
expect_rc 0 "native in place through a small scratch buffer"
standin_check trace --prefix "$CB_TMP/trace" --ranks 3 --teardown destroy
unset NCCL_COLLBENCH_TEST_SCRATCH_BYTES
echo "ok: native in place, -m, -G"

# The fault layer reaches both implementations: a corrupt element in rank
# 1's output (the root's, for gather) is found in every table of both
# (status 7).
NCCL_COLLBENCH_TEST_FAULT=corrupt:1:5
export NCCL_COLLBENCH_TEST_FAULT
CB_RUN_BIN="$CB_BUILDDIR/tests/nccl-collbench-faulty" run 3 --backend faulty-nccl -o "$ops" \
    -r 1 -b 768 -e 768 -n 1 --nccl-impl native,p2p --csv "$CB_TMP/f.csv"
unset NCCL_COLLBENCH_TEST_FAULT
expect_rc 7 "a corrupt element under native,p2p"
"$CB_PYTHON" - "$CB_TMP/f.csv" <<'PY' || show_and_fail "the fault was not found in every table"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
bad = {(r["collective"], r["impl"]) for r in rows if r["wrong"] not in ("", "0")}
assert bad == {(c, i) for c in ("alltoall", "gather", "scatter") for i in ("native", "p2p")}, bad
PY
echo "ok: faults reach both implementations"

# The MPI backend has one implementation: the option is noted, not refused.
run 2 --backend mpi -o alltoall -b 48 -e 48 -n 1 --nccl-impl p2p --csv "$CB_TMP/mpi.csv"
expect_rc 0 "--nccl-impl on the mpi backend"
has 1 '^# --nccl-impl has no effect on the mpi backend$'
[ "$(impl_column "$CB_TMP/mpi.csv")" = "" ] || show_and_fail "an impl on the mpi backend"

# A bad list: a usage error naming the value.
run 1 --backend nccl --nccl-impl native,fast
expect_rc 2 "--nccl-impl native,fast"
one_message "'fast': expected auto, native, p2p or a comma list of them"
run 1 --backend nccl --nccl-impl p2p,p2p
expect_rc 2 "--nccl-impl p2p,p2p"
one_message "'p2p' given twice"
echo "ok"
