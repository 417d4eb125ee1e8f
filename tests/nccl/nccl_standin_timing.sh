# What a measurement times, as nccl-tests 2.19.6 times it (src/common.cu,
# BenchTime and startColl; nccl-collbench(1), TIMING), seen through the
# stand-in's trace: by default the host clock from a barrier to completion
# (no CUDA event is recorded or read), each launch on its own slice of the
# buffers (offset= in the trace) so that none finds the last one's data in
# cache; --clock device times with CUDA events; --rotate 0 keeps every
# launch at the start; -z 2 waits after every iteration; the first graph
# launch of -G is timed (no untimed one before it); the CSV and JSON say
# which clock and mode ran.
. "$CB_SRCDIR/tests/support/lib.sh"
. "$CB_SRCDIR/tests/nccl/standin/lib.sh"
standin_setup 2 python trace

# offsets COUNT RANK: the distinct offsets of rank RANK's allreduces of COUNT.
offsets() {
    sed -n "s/^ncclAllReduce count=$1 inplace=0 .* offset=\([0-9]*\) .*/\1/p" \
        "$CB_TMP/trace.$2" | sort -un | wc -l
}

# The default: 1 KiB (256 floats) has 1024 slices in the 1 MiB buffers, so
# its 8 timed launches out of place (as its 2 warmup ones, from the start) run
# on 8 distinct ones; 1 MiB
# has one.
fresh_trace
run 2 --backend nccl -o allreduce -b 1K -e 1M -f 1024 -n 8 -w 2 -c 1 \
    --csv "$CB_TMP/t.csv" --json "$CB_TMP/t.json"
expect_rc 0 "the default timing"
has 1 "^# Out of bounds values : 0 OK"
has 1 "clock: host  rotate: 1"
for r in 0 1; do
    n=$(offsets 256 "$r")
    [ "$n" -ge 8 ] || show_and_fail "rank $r: 1 KiB ran on $n distinct offsets, expected >= 8"
    n=$(offsets 262144 "$r")
    [ "$n" = 1 ] || show_and_fail "rank $r: 1 MiB ran on $n distinct offsets, expected 1"
    for call in cudaEventRecord cudaEventElapsedTime; do
        ! grep -q "^$call" "$CB_TMP/trace.$r" ||
            show_and_fail "rank $r: $call in a default run (the host clock reads no event)"
    done
done
"$CB_PYTHON" - "$CB_TMP/t.csv" "$CB_TMP/t.json" <<'PY' || show_and_fail "the CSV or JSON does not say host, rotate 1, -z 0"
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert rows and all(r["clock"] == "host" and r["rotate"] == "1" and r["blocking_mode"] == "0"
                    and r["blocking"] == "0" for r in rows), rows[0]
s = json.load(open(sys.argv[2]))["parameters"]
assert s["clock"] == "host" and s["rotate"] is True and s["blocking_mode"] == 0, s
PY
echo "ok: the host clock, each launch on its own slice"

# --check-timed with rotation: the last timed launch is checked where it ran.
fresh_trace
run 2 --backend nccl -o allreduce,allgather,reducescatter,alltoall -b 1K -e 64K -f 8 -n 5 \
    --check-timed
expect_rc 0 "--check-timed with rotation"
has 1 "^# Out of bounds values : 0 OK"
echo "ok: --check-timed on the slices"

# --clock device: CUDA events around each span; --rotate 0: one offset.
fresh_trace
run 2 --backend nccl -o allreduce -b 1K -e 1M -f 1024 -n 8 -w 2 -c 1 --clock device --rotate 0 \
    --csv "$CB_TMP/d.csv"
expect_rc 0 "--clock device --rotate 0"
for r in 0 1; do
    n=$(offsets 256 "$r")
    [ "$n" = 1 ] || show_and_fail "rank $r: --rotate 0 ran on $n offsets, expected 1"
    grep -q "^cudaEventElapsedTime" "$CB_TMP/trace.$r" ||
        show_and_fail "rank $r: --clock device read no CUDA event"
done
grep -q ',device,0,0,[^,]*$' "$CB_TMP/d.csv" || show_and_fail "the CSV does not say device, -z 0, rotate 0"
echo "ok: --clock device, --rotate 0"

# -z 2: a wait (cudaStreamQuery) between any two timed launches; -z 0: the
# timed launches follow one another unwaited.
between_waits() {
    awk '/^ncclAllReduce count=256 /{ if (seen && !waited) bad++; seen = 1; waited = 0 }
         /^cudaStreamQuery/{ waited = 1 } END { print bad + 0 }' "$CB_TMP/trace.0"
}
fresh_trace
run 2 --backend nccl -o allreduce -b 1K -e 1K -n 8 -w 0 -c 0 -z 2
expect_rc 0 "-z 2"
[ "$(between_waits)" = 0 ] || show_and_fail "-z 2: launches followed one another unwaited"
fresh_trace
run 2 --backend nccl -o allreduce -b 1K -e 1K -n 8 -w 0 -c 0 -z 0
expect_rc 0 "-z 0"
[ "$(between_waits)" -ge 6 ] || show_and_fail "-z 0: the timed launches were waited for"
echo "ok: -z 2 waits, -z 0 does not"

# -G 3: three graph launches per measurement, the first among them (timed).
fresh_trace
run 2 --backend nccl -o allreduce -b 1K -e 1K -n 2 -w 1 -c 0 -G 3
expect_rc 0 "-G 3"
n=$(grep -c '^cudaGraphLaunch' "$CB_TMP/trace.0" || true)
[ "$n" = 6 ] || show_and_fail "-G 3: $n graph launches for two placements, expected 6"
echo "ok: -G 3 times its first launch"

# Refused: -z 4, -z 3 with --clock device or -G, an unknown clock.
for bad in "-z 4" "-z 3 --clock device" "-z 3 -G 2" "--clock wall" "--rotate 2"; do
    # shellcheck disable=SC2086
    run 1 --backend nccl -o allreduce $bad
    expect_rc 2 "$bad"
done
echo "ok"
