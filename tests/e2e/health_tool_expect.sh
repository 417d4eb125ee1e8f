# nccl-collbench-health alone on a node, judged by --expect, without Slurm:
# sinfo and scontrol are the stand-ins of tests/support/health_stubs.sh
# (the node's state in a file, scontrol's arguments recorded), the program
# runs 2 ranks through a
# launcher that records what the tool asked of it. A floor file the run
# cannot meet fails the node, and the scontrol command (--dry-run) names
# the measured busbw and the expected one; a floor it meets passes, and
# --expect alone drops the default --min-busbw; with both, either fails
# it; a node this tool drained that meets its expectation is returned.
. "$CB_SRCDIR/tests/support/lib.sh"
. "$CB_SRCDIR/tests/support/health_stubs.sh"
need_mpirun
health_stubs
cat >"$CB_TMP/launch" <<STUB
#!/bin/sh
echo "\$*" >"$CB_TMP/args"
exec timeout -k 5 60 $CB_MPIRUN -np "\$@"
STUB
chmod +x "$CB_TMP/launch"
node_set hx 'IDLE|'
printf '# this machine cannot meet it\nhost:* allreduce 4K 1e9\n' >"$CB_TMP/unmet"
printf '# met by any run\nhost:* allreduce 1K 1e-9\n' >"$CB_TMP/met"

# health ARGS...: the tool on node hx, 2 ranks, a small sweep.
health() {
    rc=0
    PATH="$CB_TMP/bin:$PATH" "$HEALTH" --node hx --gpus 2 --program "$CB_BIN" --launcher "$CB_TMP/launch" \
        "$@" -- --backend mpi -b 1K -e 4K -n 2 -w 1 </dev/null >"$CB_TMP/out" 2>"$CB_TMP/err" || rc=$?
}

health --dry-run --expect "$CB_TMP/unmet" --expect-ratio 0.5
expect_rc 1 "an expectation not met"
has 1 "^scontrol update NodeName='hx' State=DRAIN Reason='nccl-collbench: allreduce float sum 4096 B out-of-place busbw [0-9.]* GB/s is [0-9.]* of expected 1000000000.00 GB/s (--expect-ratio 0.5) \\[cb:[0-9a-f]*\\]'\$"
has 1 '^scontrol '
grep -q -- "-o allreduce --expect $CB_TMP/unmet --expect-ratio 0.5 --csv " "$CB_TMP/args" ||
    show_and_fail "the program was not given --expect and --expect-ratio: $(cat "$CB_TMP/args")"
grep -q -- '--min-busbw' "$CB_TMP/args" && show_and_fail "--expect alone still gated by the default floor"
[ ! -s "$CB_TMP/scontrol.log" ] || fail "--dry-run ran scontrol: $(cat "$CB_TMP/scontrol.log")"

health --dry-run --expect "$CB_TMP/met"
expect_rc 0 "an expectation met"
has 1 '^nccl-collbench-health: healthy$'
has 0 '^scontrol '

# Both: the floor gates too, and its note names the node's failure.
health --dry-run --expect "$CB_TMP/met" --min-busbw 100000
expect_rc 1 "an expectation met, a floor not"
has 1 "^scontrol update NodeName='hx' State=DRAIN Reason='nccl-collbench: allreduce float sum 4096 B out-of-place busbw [0-9.]* GB/s below the floor 100000.00 GB/s \\[cb:[0-9a-f]*\\]'\$"
grep -q -- "-o allreduce --min-busbw 100000 --expect $CB_TMP/met --csv " "$CB_TMP/args" ||
    show_and_fail "the program was not given both gates: $(cat "$CB_TMP/args")"

# Drained by this tool (its expectation not met), meets it now: returned.
health --expect "$CB_TMP/unmet"
expect_rc 1 "drained, its expectation not met"
node_get hx | grep -q '^IDLE+DRAIN|nccl-collbench: allreduce .* of expected 1000000000.00 GB/s' ||
    fail "not drained: $(node_get hx)"
: >"$CB_TMP/scontrol.log"
health --expect "$CB_TMP/met"
expect_rc 0 "returned once it meets its expectation"
[ "$(tr '\n' ' ' <"$CB_TMP/scontrol.log")" = "NodeName=hx State=RESUME -- " ] ||
    fail "not returned: scontrol was given: $(cat "$CB_TMP/scontrol.log")"
[ "$(node_get hx)" = 'IDLE|' ] || fail "not returned: $(node_get hx)"
echo ok
