# bench/run.sh, the performance script: not its figures (speed belongs to
# the script, never to make check) but that it works. With tiny sizes and
# counts on 2 ranks it runs every part on the MPI backend and prints each
# figure, as a number, beside its target; with stand-in programs of known
# times its ratios are the median over rounds of each round's tool / bare;
# a program that fails stops it with a message instead of figures.
. "$CB_SRCDIR/tests/support/lib.sh"
need_mpirun

NUM='[0-9][0-9]*\.[0-9][0-9]*'
export NP=2 ROUNDS=2 ITERS=3 WARMUP=1 OVERHEAD_MAX=64 SWEEP_MAX=4096 VERIFY_MIB=1 RUNS4=2 BUDGET=5
export MPIRUN="$CB_MPIRUN" TOOL="$CB_BIN" BARE_MPI="$CB_BUILDDIR/bench/bare_allreduce" \
    VERIFY_COST="$CB_BUILDDIR/bench/verify_cost"

bench() {
    rc=0
    timeout -k 5 240 sh "$CB_SRCDIR/bench/run.sh" "$CB_BUILDDIR" >"$CB_TMP/out" 2>"$CB_TMP/err" ||
        rc=$?
}

bench
expect_rc 0 "bench/run.sh"
# 1: one row per size, 8 to 64 B, then the summary.
has 1 "^== 1 (mpi). timing overhead"
for bytes in 8 16 32 64; do
    has 1 "^ *$bytes  *$NUM  *$NUM  *$NUM  *[0-2]/2  *$NUM  <= 1\.02\$"
done
has 1 "^  4 sizes: ratio within 0\.98-1\.02 at [0-4], at most 1\.02 at [0-4]; largest $NUM at [0-9]* B\$"
has 1 "^  the bare loop against itself (again): within 0\.98-1\.02 at [0-4] of 4 sizes, $NUM to $NUM\$"
has 1 "^  median ratio over sizes $NUM  (target <= 1\.02 at every size)\$"
# 2: the check of a 1 MiB result against a memcpy, and the sweeps.
has 1 "^  memcpy $NUM s  check $NUM s  fill $NUM s  wrong 0\$"
has 1 "^  check/memcpy $NUM (target <= 2\.00)"
has 1 "^  -c 1 $NUM s  -c 0 $NUM s  ratio $NUM  (target <= 1\.5)\$"
# 3: each rank's peak, whole and less the baseline (which may be below 0
# at these sizes); again with Open MPI's segmented ring where it is Open MPI.
runs=1
if $CB_MPIRUN --version 2>/dev/null | grep -q "Open MPI"; then
    runs=2
    has 1 "^  with Open MPI's segmented ring all-reduce"
fi
for rank in 0 1; do
    has "$runs" "^  rank $rank: peak [0-9]* KiB = $NUM x the largest message; less the baseline ([0-9]* KiB): -*$NUM x  (target <= ~2\.1)\$"
done
# 4: fixed counts time 2 runs x 10 sizes x 200 iterations; the budget no more.
has 1 "^  fixed  wall $NUM $NUM s (median $NUM s); .*; timed iterations 4000\$"
stable=$(sed -n 's/^  stable wall .*; timed iterations \([0-9]*\)$/\1/p' "$CB_TMP/out")
[ -n "$stable" ] && [ "$stable" -le 4000 ] || show_and_fail "stable: timed iterations '$stable'"
has 1 "^  wall time ratio stable/fixed $NUM  (target < 1)\$"
has 1 "^  spread ratio stable/fixed, time $NUM, iteration median $NUM  (target <= 1)\$"

# The ratios, from stand-ins of known times run by a launcher that ignores
# -np. The bare loop runs twice a round (bare and again), so its n-th run
# is in round (n + 1) / 2: at 8 B it takes 2 us, at 16 B 1, 2 and 4 us in
# rounds 1 to 3; the tool takes 3, 100 and 3.3 us in its 1st, 2nd and 3rd
# run. At 8 B the rounds' ratios are 1.5, 50 and 1.65, median 1.65; at 16 B
# 3, 50 and 0.825, median 3, where the ratio of the medians would be 1.65;
# the tool is slower in 3 and 2 of the 3 rounds; again / bare is 1.
cat >"$CB_TMP/launcher" <<'LAUNCHER'
#!/bin/sh
shift 2
exec "$@"
LAUNCHER
cat >"$CB_TMP/bare" <<LAUNCHER
#!/bin/sh
n=\$((\$(cat "$CB_TMP/bare.n" 2>/dev/null || echo 0) + 1)); echo \$n >"$CB_TMP/bare.n"
echo bytes,time_us
echo 8,2.0
echo 16,\$(echo "1 2 4" | cut -d' ' -f\$(((n + 1) / 2)))
LAUNCHER
cat >"$CB_TMP/tool" <<LAUNCHER
#!/bin/sh
n=\$((\$(cat "$CB_TMP/tool.n" 2>/dev/null || echo 0) + 1)); echo \$n >"$CB_TMP/tool.n"
t=\$(echo "3.0 100.0 3.3" | cut -d' ' -f\$n)
echo bytes,placement,time_us
echo 8,out-of-place,\$t
echo 8,in-place,1000
echo 16,out-of-place,\$t
LAUNCHER
chmod +x "$CB_TMP/launcher" "$CB_TMP/bare" "$CB_TMP/tool"
MPIRUN="$CB_TMP/launcher" TOOL="$CB_TMP/tool" BARE_MPI="$CB_TMP/bare" ROUNDS=3 PARTS=1 bench
expect_rc 0 "bench/run.sh with stand-ins"
has 1 "^ *8  *2\.000  *3\.300  *1\.6500  *3/3  *1\.0000  <= 1\.02\$"
has 1 "^ *16  *2\.000  *3\.300  *3\.0000  *2/3  *1\.0000  <= 1\.02\$"
has 1 "^  2 sizes: ratio within 0\.98-1\.02 at 0, at most 1\.02 at 0; largest 3\.0000 at 16 B\$"
has 1 "^  the bare loop against itself (again): within 0\.98-1\.02 at 2 of 2 sizes, 1\.0000 to 1\.0000\$"
has 1 "^  median ratio over sizes 2\.3250  (target <= 1\.02 at every size)\$"

# A tool that fails: a message and a non-zero status, no figures.
TOOL=false PARTS=1 bench
[ "$rc" != 0 ] || show_and_fail "bench/run.sh with a failing tool exited with 0"
grep -q "^bench/run.sh: the tool run of round 1 printed no times\$" "$CB_TMP/err" ||
    show_and_fail "no message about the failing tool"
has 0 "<= 1\.02\$"
TOOL=false PARTS=2 VERIFY_MIB=1 bench
[ "$rc" != 0 ] || show_and_fail "bench/run.sh part 2 with a failing tool exited with 0"
grep -q "^bench/run.sh: failed: launch false " "$CB_TMP/err" ||
    show_and_fail "no message about the failing sweep"
has 0 "(target <= 1\.5)"
echo "ok"

# The bench programs parse their arguments strictly: a malformed or
# out-of-range value is a usage error (status 2) naming it, never atoi's 0.
for args in "12x" "-1" "10 0 8 4" "10 0 8 4M"; do
    rc=0
    # shellcheck disable=SC2086
    "$CB_BUILDDIR/bench/verify_cost" $args >"$CB_TMP/out" 2>"$CB_TMP/err" || rc=$?
    case "$args" in
        "12x" | "-1") expect_rc 2 "verify_cost $args"
            grep -q "argument 1 '$args' is not an integer" "$CB_TMP/err" ||
                show_and_fail "verify_cost $args: no message naming the value" ;;
        *) expect_rc 2 "verify_cost $args (too many arguments)" ;;
    esac
    rc=0
    # shellcheck disable=SC2086
    timeout -k 5 60 $CB_MPIRUN -np 1 "$CB_BUILDDIR/bench/bare_allreduce" $args \
        >"$CB_TMP/out" 2>"$CB_TMP/err" || rc=$?
    [ "$rc" != 0 ] || show_and_fail "bare_allreduce $args: exit status 0"
    grep -q "usage: bare_allreduce" "$CB_TMP/err" || show_and_fail "bare_allreduce $args: no usage"
done
