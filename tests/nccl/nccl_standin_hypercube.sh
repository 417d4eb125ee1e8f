# hypercube through the NCCL backend on the CPU stand-in: log2(n) grouped
# send/receive steps on the backend's stream, verified at 2 and 4 ranks,
# in place and out of place, with -m (never grouped: each step reads the
# last) and -G (the steps captured in one graph).
. "$CB_SRCDIR/tests/support/lib.sh"
. "$CB_SRCDIR/tests/nccl/standin/lib.sh"
standin_setup 4 python
CB_RUN_TIMEOUT=120
for np in 2 4; do
    for opts in "-n 2" "-m 3 -n 2" "-G 2 -w 0 -n 2"; do
        # shellcheck disable=SC2086
        run "$np" --backend nccl -o hypercube -d float,int8 -b 64 -e 4K -f 8 -c 1 $opts
        expect_rc 0 "hypercube on the nccl backend, $np ranks, $opts"
        grep -q '^# Result: PASS' "$CB_TMP/out" || show_and_fail "$np ranks $opts: not PASS"
        [ "$(grep -c '^ *[0-9]' "$CB_TMP/out")" = 6 ] || show_and_fail "$np ranks $opts: not 6 rows"
    done
done
exit 0
