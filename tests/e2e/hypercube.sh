# hypercube (nccl-tests' hypercube_perf): an all-gather by recursive
# doubling over sends and receives, verified element by element, with
# their byte counting: a block of size / n rounded down to 16 bytes, the
# size column n blocks, an empty redop column, and algbw = busbw = (n-1)
# blocks / time (hypercube.cu's HyperCubeGetBw). A rank count that is not a power of two stops with status 1
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
    # The redop column is blank: 12 fields; each cell's algbw is its busbw.
    bad=$(awk -v n="$np" '/^ *[0-9]/ {
        if (NF != 12 || $4 != -1) print "fields", $0
        if ($8 != 0 || $12 != 0) print "wrong", $0
        if ($6 != $7 || $10 != $11) print "algbw", $0
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
