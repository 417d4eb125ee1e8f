# alltoallv through the NCCL backend on the CPU stand-in: each traffic matrix
# at 1 to 4 ranks, verified, the size column the busiest rank's bytes; with
# -m, -G, -z and -C; the calls traced: one group per operation of a send and
# a receive per peer with the matrix's counts (hot:4 at 3 ranks: rank 0
# receives 4 times what the others do), and no send or receive for a zero
# count (a random matrix has some), whose peer then posts none either.
. "$CB_SRCDIR/tests/support/lib.sh"
. "$CB_SRCDIR/tests/nccl/standin/lib.sh"
standin_setup 4 python

sizes=5,15,45,135,405,1215,3645
for np in 1 2 3 4; do
    for matrix in uniform random:11 hot:4:1 hot:2:2; do
        run "$np" --backend nccl -o alltoallv --a2av-matrix "$matrix" -d float,half,int64 \
            -b 5 -e 4K -f 3 -n 1 -c 1 --csv "$CB_TMP/v.csv"
        expect_rc 0 "alltoallv $matrix through the nccl backend on $np ranks"
        check check-sweep --table "$CB_TMP/out" --csv "$CB_TMP/v.csv" --ranks "$np" \
            --sizes "$sizes" --collective alltoallv --dtypes float,half,int64 \
            --a2av-matrix "$matrix"
        standin_check csv --csv "$CB_TMP/v.csv" --backend nccl --ranks "$np"
    done
done

# The launch options.
for opts in "-m 3" "-G 2 -w 0" "-z 1 -m 2" "-C 1"; do
    # shellcheck disable=SC2086
    run 3 --backend nccl -o alltoallv --a2av-matrix random:3 -d float,fp8_e4m3,int64 \
        -b 48 -e 3072 -f 4 -n 2 -c 2 $opts --csv "$CB_TMP/o.csv"
    expect_rc 0 "alltoallv with $opts"
    check check-sweep --table "$CB_TMP/out" --csv "$CB_TMP/o.csv" --ranks 3 \
        --sizes 48,192,768,3072 --collective alltoallv --dtypes float,fp8_e4m3,int64 \
        --passes 2 --a2av-matrix random:3
done

# The calls. hot:4 at 3 ranks, 96 B of floats: rank 0's column weighs
# 3 x 4, so the unit is 24 / 12 = 2 elements: every rank sends 8 to rank 0
# and 2 to each other rank; rank 0 receives 8 from each, the others 2. One
# timed launch and one check, each one group of 3 sends and 3 receives.
CB_STANDIN_TRACE="$CB_TMP/trace"
export CB_STANDIN_TRACE
run 3 --backend nccl -o alltoallv --a2av-matrix hot:4 -b 96 -e 96 -n 1 -w 0 -c 1
expect_rc 0 "traced alltoallv"
standin_check trace --prefix "$CB_TMP/trace" --ranks 3 --teardown destroy \
    --count "ncclSend count=8 peer=0=2" --count "ncclSend count=2 peer=1=2" \
    --count "ncclSend count=2 peer=2=2" --count "p2p group sends+receives=6=3"
for r in 0 1 2; do
    want=$([ "$r" = 0 ] && echo 8 || echo 2)
    for peer in 0 1 2; do
        n=$(grep -c "^ncclRecv count=$want peer=$peer align=" "$CB_TMP/trace.$r" || true)
        [ "$n" = 2 ] || fail "rank $r: $n receives of $want from $peer, expected 2"
    done
done

# Zero counts: random:3 at 4 ranks has two empty cells; the sends and
# receives posted are exactly the non-empty cells (twice: timed and check).
CB_STANDIN_TRACE="$CB_TMP/trace_random"   # a trace file is appended to
run 4 --backend nccl -o alltoallv --a2av-matrix random:3 -b 4K -e 4K -n 1 -w 0 -c 1
expect_rc 0 "traced random alltoallv"
standin_check trace --prefix "$CB_TMP/trace_random" --ranks 4 --teardown destroy
"$CB_PYTHON" - "$CB_TMP/trace_random" "$CB_SRCDIR/tests/support" <<'PY' || fail "random's calls"
import re, sys
sys.path.insert(0, sys.argv[2])
from parse_output import traffic_weight
n, prefix = 4, sys.argv[1]
w = [[traffic_weight("random:3", n, i, j) for j in range(n)] for i in range(n)]
assert any(0 in row for row in w), "random:3 has no empty cell at 4 ranks"
unit = 1024 // max(max(sum(w[r]), sum(w[i][r] for i in range(n))) for r in range(n))
for r in range(n):
    # Past the backend's warmup, which ends where it measures the free memory.
    lines = open("%s.%d" % (prefix, r)).read().splitlines()
    lines = lines[next(k for k, l in enumerate(lines) if l.startswith("cudaMemGetInfo")):]
    sends = sorted(re.findall(r"^ncclSend count=(\d+) peer=(\d+) align=", "\n".join(lines), re.M))
    recvs = sorted(re.findall(r"^ncclRecv count=(\d+) peer=(\d+) align=", "\n".join(lines), re.M))
    want_s = sorted([(str(w[r][j] * unit), str(j)) for j in range(n) if w[r][j]] * 2)
    want_r = sorted([(str(w[i][r] * unit), str(i)) for i in range(n) if w[i][r]] * 2)
    assert sends == want_s, (r, sends, want_s)
    assert recvs == want_r, (r, recvs, want_r)
PY
unset CB_STANDIN_TRACE
echo "ok"
