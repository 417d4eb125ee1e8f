# The hang report's side channel under disturbance (issue 36): silent
# connections and a forged HELLO at rank 0's port during the set-up, a
# rank that stops answering. tests/faults/side_channel_probe.c says what is
# checked; it prints "probe: ok" when all of it holds.
. "$CB_SRCDIR/tests/support/lib.sh"
need_mpirun
[ -r /proc/self/net/tcp ] || skip "no /proc/self/net/tcp to find rank 0's port in"
CB_RUN_BIN="$CB_BUILDDIR/tests/side-channel-probe" run 4
expect_rc 0 "the side channel under disturbance"
grep -q '^probe: ok$' "$CB_TMP/out" || show_and_fail "the probe did not say ok"
echo ok
