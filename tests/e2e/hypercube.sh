# hypercube (nccl-tests' hypercube_perf): an all-gather by recursive
# doubling over sends and receives, verified element by element, with
# their byte counting: a block of size / n rounded down to 16 bytes, the
# size column n blocks, busbw = algbw x (n-1)/n (each rank receives n-1
# blocks). A rank count that is not a power of two stops with status 1
# naming it; -o all leaves hypercube out.
. "$CB_SRCDIR/tests/support/lib.sh"
need_mpirun
ln -s "$CB_BIN" "$CB_TMP/hypercube_perf"

for np in 2 4; do
    CB_RUN_BIN="$CB_TMP/hypercube_perf" run "$np" -b 100 -e 6400 -f 8 -n 2 -w 1 -d int8
    unset CB_RUN_BIN
    expect_rc 0 "hypercube_perf on $np ranks"
    grep -q '^# Collective: hypercube$' "$CB_TMP/out" || show_and_fail "not hypercube"
    grep -q '^# Result: PASS' "$CB_TMP/out" || show_and_fail "$np ranks: not verified"
    # 100 B over n ranks: a block of 100/n bytes rounded down to 16; and
    # 800, 6400 likewise.
    # Each cell's busbw is its algbw x (n-1)/n, to the rounding of both.
    bad=$(awk -v n="$np" 'function off(alg, bus) { d = bus - alg * (n - 1) / n
            return d > 0.0101 || d < -0.0101 }
        /^ *[0-9]/ {
        if ($9 != 0 || $13 != 0) print "wrong", $0
        if (off($7, $8) || off($11, $12)) print "factor", $0
        if ($2 * n != $1 || $2 % 16 != 0) print "count", $0
    }' "$CB_TMP/out")
    [ -z "$bad" ] || show_and_fail "$np ranks: $bad"
    sizes=$(awk '/^ *[0-9]/ {printf "%s ", $1}' "$CB_TMP/out")
    want=$(for s in 100 800 6400; do echo "$np $s" | awk '{printf "%d ", $1 * int($2 / $1 / 16) * 16}'; done)
    [ "$sizes" = "$want" ] || show_and_fail "$np ranks: sizes '$sizes', expected '$want'"
done

# Three ranks: refused at the first launch, naming why.
run 3 -o hypercube -b 64 -e 64 -n 1
expect_rc 1 "hypercube on 3 ranks"
grep -q 'power-of-two number of ranks, not 3' "$CB_TMP/err" || show_and_fail "3 ranks: no reason"

# -o all: every collective but hypercube (and comm_init).
run 2 -o all -b 64 -e 64 -n 1 -w 0 -c 0
expect_rc 0 "-o all"
grep -q '^# Collective: hypercube' "$CB_TMP/out" && show_and_fail "-o all ran hypercube"
exit 0
