# nccl-collbench-health's judgement of one node, without Slurm (sinfo and
# scontrol are the stand-ins of tests/support/health_stubs.sh, which keep
# the node's state as Slurm would):
# - --dry-run prints scontrol lines that run nothing of the program's text
#   when pasted into a shell: the reason arrives whole, as one argument;
# - a node that is not up (DOWN, FAIL, MAINT, REBOOT_*, NOT_RESPONDING,
#   POWERED_DOWN, an unknown state), or drained by someone else (an
#   administrator's reason, one that starts "nccl-collbench:", one copied
#   from another node's drain by this tool, or a drain of an earlier
#   version without the token), is left alone, pass or fail; an up node
#   (IDLE, ALLOCATED, MIXED, +COMPLETING) that fails is drained, and the
#   tool's own drain is returned once it passes;
# - with --expect, a run that forms no expectation (a file whose rules
#   match nothing, auto on the MPI backend) is could-not-check (3), never
#   healthy, and a node this tool drained stays drained;
# - a node of one GPU (one rank: busbw 0 by definition) is not drained as
#   slow: its elements are verified (0, or drained for wrong elements), and
#   a floor or expectation asked of it cannot be judged (3);
# - --scan drains on suspects of confidence certain (wrong elements), or
#   high and named again by a second scan: a node, link or rail named at
#   medium or low, or at high once only, is could-not-check (3), left as
#   it is (a drain of the tool's stays).
. "$CB_SRCDIR/tests/support/lib.sh"
. "$CB_SRCDIR/tests/support/health_stubs.sh"
need_mpirun
health_stubs

# A program that prints one gate note and the verdict of its status and
# exits with it ($CB_TMP/fake.rc and $CB_TMP/fake.note; $CB_TMP/fake.verdict,
# where it exists, instead of the verdict), started by a launcher that runs
# it once. A scan's second call prints $CB_TMP/fake.note2 where that exists.
cat >"$CB_TMP/fake" <<STUB
#!/bin/sh
if [ -f "$CB_TMP/fake.called" ] && [ -f "$CB_TMP/fake.note2" ]; then
    cat "$CB_TMP/fake.note2"
    echo '# Result: FAIL (fake) 1 measurement in 0.1 s'
    exit 8
fi
touch "$CB_TMP/fake.called"
cat "$CB_TMP/fake.note"
rc=\$(cat "$CB_TMP/fake.rc")
if [ -f "$CB_TMP/fake.verdict" ]; then
    cat "$CB_TMP/fake.verdict"
else
    case \$rc in 0) v=PASS ;; 5|6) v=UNCHECKED ;; *) v=FAIL ;; esac
    echo "# Result: \$v (fake) 1 measurement in 0.1 s"
fi
exit \$rc
STUB
cat >"$CB_TMP/direct" <<'STUB'
#!/bin/sh
shift
exec "$@"
STUB
cat >"$CB_TMP/launch" <<STUB
#!/bin/sh
n=\$1
shift
one=""
[ "\$n" = 1 ] && one="$CB_MPIRUN_ONE_RANK"
exec timeout -k 5 60 $CB_MPIRUN \$one -np "\$n" "\$@"
STUB
chmod +x "$CB_TMP/fake" "$CB_TMP/direct" "$CB_TMP/launch"
slow() { echo '# Below --min-busbw 1.00 GB/s: allreduce float sum 4096 B out-of-place busbw 0.01 GB/s' >"$CB_TMP/fake.note"; echo 8 >"$CB_TMP/fake.rc"; }
good() { : >"$CB_TMP/fake.note"; echo 0 >"$CB_TMP/fake.rc"; }

# health NODE ARGS...: the tool on NODE with the fake program.
health() {
    name=$1
    shift
    rc=0
    PATH="$CB_TMP/bin:$PATH" "$HEALTH" --node "$name" --gpus 2 --program "$CB_TMP/fake" \
        --launcher "$CB_TMP/direct" "$@" </dev/null >"$CB_TMP/out" 2>"$CB_TMP/err" || rc=$?
}
# real NODE ARGS... -- PROGRAM-ARGS: the tool on NODE with the program, 2 ranks.
real() {
    name=$1
    shift
    rc=0
    PATH="$CB_TMP/bin:$PATH" "$HEALTH" --node "$name" --program "$CB_BIN" --launcher "$CB_TMP/launch" \
        "$@" </dev/null >"$CB_TMP/out" 2>"$CB_TMP/err" || rc=$?
}
no_update() {
    [ ! -s "$CB_TMP/scontrol.log" ] || show_and_fail "$1: scontrol was given: $(cat "$CB_TMP/scontrol.log")"
}

# 1. --dry-run: text from the program's output is quoted. A figure with
# quotes, $( ), backquotes and a semicolon.
# shellcheck disable=SC2016
evil='allreduce "$(touch pwned1)" `touch pwned2` it'"'"'s; touch pwned3 $HOME'
echo "# Below --min-busbw 1.00 GB/s: $evil" >"$CB_TMP/fake.note"
echo 8 >"$CB_TMP/fake.rc"
node_set hq 'IDLE|'
health hq --dry-run
expect_rc 1 "--dry-run, a figure with shell syntax"
has 1 '^scontrol update '
no_update "--dry-run"
mkdir -p "$CB_TMP/paste" || exit 99
# Pasted into a shell (with scontrol recording its arguments): nothing of
# the figure runs, and the reason is one argument, the text as it was.
grep '^scontrol update ' "$CB_TMP/out" >"$CB_TMP/pasted"
(cd "$CB_TMP/paste" && PATH="$CB_TMP/bin:$PATH" HOME=/nonexistent sh "$CB_TMP/pasted") ||
    show_and_fail "the printed scontrol line does not run"
[ -z "$(ls "$CB_TMP/paste")" ] || show_and_fail "pasting the --dry-run line ran: $(ls "$CB_TMP/paste")"
grep -qxF "Reason=nccl-collbench: $evil below the floor 1.00 GB/s [cb:$(sed -n 's/.*\[cb:\([0-9a-f]*\)\].*/\1/p' "$CB_TMP/pasted")]" \
    "$CB_TMP/scontrol.log" || fail "the pasted reason is not the figure as it was: $(cat "$CB_TMP/scontrol.log")"
grep -qxF 'NodeName=hq' "$CB_TMP/scontrol.log" || fail "pasted: no NodeName=hq: $(cat "$CB_TMP/scontrol.log")"
: >"$CB_TMP/scontrol.log"

# 1b. The verdict, not the status alone (issue 44): status 0 with
# "# Result: FAIL", or with no output at all, is could-not-check (3),
# nothing drained or returned.
good
echo '# Result: FAIL (1 wrong) 1 measurement in 0.1 s' >"$CB_TMP/fake.verdict"
node_set hv 'IDLE|'
health hv --dry-run
expect_rc 3 "status 0 with a FAIL verdict"
grep -q 'could not check: .*exited with status 0 but its verdict is FAIL' "$CB_TMP/err" ||
    show_and_fail "status 0 with a FAIL verdict: not named"
: >"$CB_TMP/fake.verdict"
health hv --dry-run
expect_rc 3 "status 0 and no output"
grep -q "could not check: .*exited with status 0 but wrote no verdict (no '# Result:' line)" "$CB_TMP/err" ||
    show_and_fail "status 0 and no output: not named"
has 0 '^scontrol update '
rm -f "$CB_TMP/fake.verdict"
: >"$CB_TMP/scontrol.log"

# 2. States. Nodes that are not up, or drained by someone else: left
# alone, failing or passing.
slow
node_set hy 'IDLE|'
health hy --dry-run
expect_rc 1 "an idle node that fails"
our_reason=$(sed -n "s/^scontrol update NodeName='hy' State=DRAIN Reason='\(.*\)'\$/\1/p" "$CB_TMP/out")
[ -n "$our_reason" ] || show_and_fail "no drain printed for node hy"
i=0
for line in 'DOWN|Not responding' 'DOWN+DRAIN|cable' 'IDLE+DRAIN|maintenance by hand' \
    'IDLE+DRAIN|nccl-collbench: admin checking' "IDLE+DRAIN|$our_reason" \
    'IDLE+DRAIN|nccl-collbench: allreduce float sum 4096 B out-of-place busbw 0.01 GB/s below the floor 1.00 GB/s' \
    'IDLE+DRAIN+FAIL|ECC errors' 'ALLOCATED+DRAIN+FAIL|ECC errors' 'IDLE+MAINT|' 'MIXED+MAINT|' \
    'IDLE+REBOOT_REQUESTED|kernel update' 'ALLOCATED+REBOOT_ISSUED|kernel update' \
    'IDLE+NOT_RESPONDING|' 'IDLE+POWERED_DOWN|' 'DOWN*|' 'FUTURE|' 'IDLE+DRAIN+MAINT|window' 'IDLE+MAINTENANCE+RESERVED|' 'UNKNOWN|'; do
    i=$((i + 1))
    node_set "h$i" "$line"
    slow
    health "h$i"
    expect_rc 1 "failing node in state '$line'"
    no_update "failing node in state '$line'"
    grep -q "^nccl-collbench-health: node h$i is .*: left alone\$" "$CB_TMP/out" ||
        show_and_fail "failing node in state '$line': not said to be left alone"
    case "$line" in
        "IDLE+DRAIN|"*) what="drained by someone else (${line#*|})" ;;
        *) what="not up (${line%%|*}" ;;
    esac
    grep -qF "node h$i is $what" "$CB_TMP/out" || show_and_fail "state '$line': not said '$what'"
    [ "$(node_get "h$i")" = "$line" ] || fail "state '$line' became $(node_get "h$i")"
    good
    health "h$i"
    expect_rc 0 "passing node in state '$line'"
    no_update "passing node in state '$line'"
done

# The tool's own drain on a node then marked for reboot, or set DOWN:
# not up, left alone.
node_set hr 'IDLE|'
slow
health hr
expect_rc 1 "hr drained"
for extra in +REBOOT_REQUESTED +REBOOT_ISSUED +MAINTENANCE +NOT_RESPONDING; do
    node_set hr "IDLE+DRAIN$extra|$(node_get hr | cut -d'|' -f2-)"
    before=$(node_get hr)
    : >"$CB_TMP/scontrol.log"
    good
    health hr
    expect_rc 0 "the tool's drain, then $extra, passing"
    no_update "the tool's drain, then $extra"
    [ "$(node_get hr)" = "$before" ] || fail "$extra: hr changed: $(node_get hr)"
done

# Up nodes that fail are drained with the token; once they pass, returned.
for st in IDLE ALLOCATED MIXED IDLE+COMPLETING MIXED+RESERVED; do
    node_set hu "$st|"
    slow
    health hu
    expect_rc 1 "failing node in state $st"
    node_get hu | grep -q "^$st+DRAIN|nccl-collbench: allreduce .* below the floor 1.00 GB/s \[cb:[0-9a-f]\{16\}\]\$" ||
        fail "$st: not drained with a token: $(node_get hu)"
    # Failing again: drained again (its own drain).
    health hu
    expect_rc 1 "failing again in state $st"
    grep -q 'State=DRAIN' "$CB_TMP/scontrol.log" || fail "$st: its own drain not renewed"
    : >"$CB_TMP/scontrol.log"
    good
    health hu
    expect_rc 0 "passing node drained by the tool ($st)"
    grep -q 'node hu passed: returned to service' "$CB_TMP/out" || show_and_fail "$st: not returned"
    [ "$(node_get hu)" = "$st|" ] || fail "$st: not returned: $(node_get hu)"
    : >"$CB_TMP/scontrol.log"
done

# 3. --expect with no expectation: could not check, never healthy.
printf 'host:no-such-host allreduce 1K 1e-9\n' >"$CB_TMP/nomatch"
node_set hx 'IDLE|'
real hx --gpus 2 --expect "$CB_TMP/nomatch" -- --backend mpi -b 1K -e 4K -n 2 -w 1
expect_rc 3 "--expect FILE whose rules match nothing"
grep -q '^nccl-collbench-health: could not check node hx: --expect .* formed no expectation' "$CB_TMP/out" ||
    show_and_fail "--expect FILE matching nothing: no reason"
grep -q '^nccl-collbench-health: healthy' "$CB_TMP/out" && show_and_fail "called healthy"
no_update "--expect FILE matching nothing"
real hx --gpus 2 --expect auto -- --backend mpi -b 1K -e 4K -n 2 -w 1
expect_rc 3 "--expect auto on the mpi backend, one node"
grep -q 'could not check node hx: --expect auto formed no expectation' "$CB_TMP/out" ||
    show_and_fail "--expect auto: no reason"
no_update "--expect auto with no expectation"
# Drained by this tool earlier: it stays drained.
slow
health hx
expect_rc 1 "hx drained"
: >"$CB_TMP/scontrol.log"
drained=$(node_get hx)
real hx --gpus 2 --expect "$CB_TMP/nomatch" -- --backend mpi -b 1K -e 4K -n 2 -w 1
expect_rc 3 "--expect FILE matching nothing, node drained by the tool"
no_update "a node drained by the tool, no expectation"
[ "$(node_get hx)" = "$drained" ] || fail "hx changed: $(node_get hx)"

# 4. One GPU: busbw is 0 by definition; never drained as slow.
node_set h1gpu 'IDLE|'
real h1gpu --gpus 1 -- --backend mpi -b 1K -e 4K -n 2 -w 1
expect_rc 0 "one GPU, the default floor"
no_update "one GPU, the default floor"
grep -q 'one GPU, elements verified' "$CB_TMP/out" || show_and_fail "one GPU: not said what was judged"
grep -q -- '--min-busbw' "$CB_TMP/err" && show_and_fail "one GPU: a floor"
real h1gpu --gpus 1 --min-busbw 5 -- --backend mpi -b 1K -e 4K -n 2 -w 1
expect_rc 3 "one GPU, --min-busbw 5"
grep -q 'could not check node h1gpu: one GPU: .* --min-busbw 5' "$CB_TMP/out" ||
    show_and_fail "one GPU, --min-busbw: no reason"
no_update "one GPU, --min-busbw"
real h1gpu --gpus 1 --expect auto -- --backend mpi -b 1K -e 4K -n 2 -w 1
expect_rc 3 "one GPU, --expect auto"
no_update "one GPU, --expect"
# Its elements are still judged: a wrong one drains it.
NCCL_COLLBENCH_TEST_FAULT=corrupt:0:3 PATH="$CB_TMP/bin:$PATH" "$HEALTH" --node h1gpu --gpus 1 \
    --program "$CB_BUILDDIR/tests/nccl-collbench-faulty" --launcher "$CB_TMP/launch" \
    -- --backend faulty-mpi -b 1K -e 4K -n 2 -w 1 </dev/null >"$CB_TMP/out" 2>"$CB_TMP/err" && rc=0 || rc=$?
expect_rc 1 "one GPU, a wrong element"
node_get h1gpu | grep -q '^IDLE+DRAIN|nccl-collbench: [0-9]* wrong elements in allreduce over 1 GPUs \[cb:' ||
    fail "one GPU with a wrong element: not drained: $(node_get h1gpu)"

# 5. --scan and the suspects' confidence (a program that prints the
# suspect lines of $CB_TMP/fake.note, and on a second call those of
# $CB_TMP/fake.note2, as set by "again", started by an srun stand-in).
cat >"$CB_TMP/srun" <<'STUB'
#!/bin/sh
shift 5
exec "$@"
STUB
chmod +x "$CB_TMP/srun"
# scan LINE...: a scan naming the suspects LINE... (exit 8, or 7 with wrong
# elements) over nodes s0, s1, s2.
scan() {
    : >"$CB_TMP/fake.note"
    echo 8 >"$CB_TMP/fake.rc"
    for line; do
        echo "# Suspect $line" >>"$CB_TMP/fake.note"
        case "$line" in *wrong*) echo 7 >"$CB_TMP/fake.rc" ;; esac
    done
    [ $# -gt 0 ] || echo 0 >"$CB_TMP/fake.rc"
    rm -f "$CB_TMP/fake.called"
    : >"$CB_TMP/scontrol.log"
    rc=0
    PATH="$CB_TMP/bin:$PATH" SLURM_JOB_NODELIST=s0,s1,s2 "$HEALTH" --scan --gpus 2 --program "$CB_TMP/fake" \
        --srun "$CB_TMP/srun" </dev/null >"$CB_TMP/out" 2>"$CB_TMP/err" || rc=$?
}
for n in s0 s1 s2; do node_set $n 'IDLE|'; done
for c in low medium; do
    scan "node s1 (GPU 0000:17:00.0): pairs 0.01 GB/s, reference 0.25 GB/s, ratio 0.04, confidence $c"
    expect_rc 3 "a suspect node of confidence $c"
    no_update "a suspect node of confidence $c"
    grep -q "^nccl-collbench-health: could not check node s1: scan node s1 .*confidence $c; left as it is\$" \
        "$CB_TMP/out" || show_and_fail "confidence $c: s1 not said to be unchecked"
    scan "link s0 - s2: 0.04 GB/s, reference 0.33 GB/s, ratio 0.12, confidence $c"
    expect_rc 3 "a suspect link of confidence $c"
    no_update "a suspect link of confidence $c"
    [ "$(grep -c '^nccl-collbench-health: could not check node s[02]: scan link s0 - s2' "$CB_TMP/out")" = 2 ] ||
        show_and_fail "confidence $c: the link's ends not said to be unchecked"
    scan "rail 1: 0.01 GB/s, reference 0.06 GB/s, ratio 0.13, confidence $c"
    expect_rc 3 "a suspect rail of confidence $c"
done
# again LINE...: what a second scan names.
again() {
    : >"$CB_TMP/fake.note2"
    for line; do echo "# Suspect $line" >>"$CB_TMP/fake.note2"; done
}
high_s1="node s1 (GPU 0000:17:00.0): pairs 0.01 GB/s, reference 0.25 GB/s, ratio 0.04, confidence high"
# High, not named again (or named again at medium, or another part):
# could not check. Wrong elements need no second scan.
for second in "" "node s1 (GPU 0000:17:00.0): pairs 0.1 GB/s, reference 0.25 GB/s, ratio 0.4, confidence medium" \
    "node s2 (GPU 0000:17:00.0): pairs 0.01 GB/s, reference 0.25 GB/s, ratio 0.04, confidence high"; do
    if [ -n "$second" ]; then again "$second"; else again; fi
    scan "$high_s1"
    expect_rc 3 "confidence high, then '$second'"
    no_update "confidence high, then '$second'"
    grep -q '^nccl-collbench-health: a second scan to confirm: node s1$' "$CB_TMP/out" ||
        show_and_fail "no second scan"
    grep -q "could not check node s1: .*confidence high, not confirmed by a second scan; left as it is" \
        "$CB_TMP/out" || show_and_fail "s1 not said to be unconfirmed"
done
again "node s1 (GPU 0000:3b:00.0): node all-reduce 0.01 GB/s, reference 0.25 GB/s, ratio 0.04, confidence high"
scan "$high_s1"
expect_rc 1 "a suspect node of confidence high, named again"
node_get s1 | grep -q '^IDLE+DRAIN|nccl-collbench: scan node s1 .*confidence high \[cb:' ||
    fail "confidence high: s1 not drained: $(node_get s1)"
# Drained by the tool, then named at low confidence: it stays drained.
scan "node s1 (GPU 0000:17:00.0): pairs 0.01 GB/s, reference 0.25 GB/s, ratio 0.04, confidence low"
expect_rc 3 "the tool's drain, then a suspect of confidence low"
no_update "the tool's drain, then a suspect of confidence low"
scan
expect_rc 0 "a healthy scan"
grep -q 'node s1 passed: returned to service' "$CB_TMP/out" || show_and_fail "s1 not returned"
again
scan "node s2 (GPU 0000:3b:00.0): 5 wrong elements"
expect_rc 1 "wrong elements"
grep -q 'a second scan' "$CB_TMP/out" && show_and_fail "wrong elements: a second scan"
node_get s2 | grep -q '^IDLE+DRAIN|nccl-collbench: scan node s2 (GPU 0000:3b:00.0): 5 wrong elements \[cb:' ||
    fail "wrong elements: s2 not drained: $(node_get s2)"
again "rail 1: 0.01 GB/s, reference 0.06 GB/s, ratio 0.13, confidence high"
scan "rail 1: 0.01 GB/s, reference 0.06 GB/s, ratio 0.13, confidence high"
expect_rc 1 "a suspect rail of confidence high, named again"

# 6. --scan --expect: each node's all-reduce (--split node) against its
# expectation, with the program on 2 fake hosts s0, s1 (NCCL_HOSTID) of 2
# ranks (1 with --gpus 1), started by an srun stand-in through mpirun; the
# scan's own suspects silenced (--suspect-ratio 0.01). No expectation for
# a node: could not check, never healthy; one GPU a node: could not check.
cat >"$CB_TMP/hostid-scan.sh" <<'STUB'
#!/bin/sh
NCCL_HOSTID=s$((${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-$PMIX_RANK}} / CB_PER))
export NCCL_HOSTID
exec "$@"
STUB
cat >"$CB_TMP/srun-mpi" <<STUB
#!/bin/sh
CB_PER=\${5#--ntasks-per-node=}
export CB_PER
n=\$((\$2 * CB_PER))
shift 5
exec timeout -k 5 60 $CB_MPIRUN -np \$n "$CB_TMP/hostid-scan.sh" "\$@"
STUB
chmod +x "$CB_TMP/srun-mpi" "$CB_TMP/hostid-scan.sh"
printf 'host:* allreduce 1K 1e-9\n' >"$CB_TMP/met"
# scan_expect GPUS FLOORS: the tool over s0, s1.
scan_expect() {
    : >"$CB_TMP/scontrol.log"
    rc=0
    PATH="$CB_TMP/bin:$PATH" SLURM_JOB_NODELIST=s0,s1 "$HEALTH" --scan --gpus "$1" --expect "$2" \
        --program "$CB_BIN" --srun "$CB_TMP/srun-mpi" \
        -- --backend mpi -b 1K -e 4K -n 2 -w 1 --suspect-ratio 0.01 </dev/null >"$CB_TMP/out" 2>"$CB_TMP/err" ||
        rc=$?
}
for n in s0 s1; do node_set $n 'IDLE|'; done
scan_expect 2 "$CB_TMP/nomatch"
expect_rc 3 "--scan --expect FILE whose rules match nothing"
[ "$(grep -c '^nccl-collbench-health: could not check node s[01]: --expect .* formed no expectation' "$CB_TMP/out")" = 2 ] ||
    show_and_fail "--scan --expect with no expectation: both nodes not said to be unchecked"
no_update "--scan --expect with no expectation"
scan_expect 2 "$CB_TMP/met"
expect_rc 0 "--scan --expect, expectations met"
has 1 '^nccl-collbench-health: healthy$'
scan_expect 1 "$CB_TMP/met"
expect_rc 3 "--scan --gpus 1 --expect"
[ "$(grep -c '^nccl-collbench-health: could not check node s[01]: one GPU' "$CB_TMP/out")" = 2 ] ||
    show_and_fail "--scan --gpus 1 --expect: both nodes not said to be unchecked"
no_update "--scan --gpus 1 --expect"
echo ok
