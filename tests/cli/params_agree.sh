# Ranks given different options: every rank stops with status 2 before
# anything is measured, and one message names the first option that differs
# with rank 0's value and the other rank's. (Before, these hung until the
# watchdog, aborted in MPI, or ran with inconsistent results.) A command line
# that another rank alone cannot parse is named with that rank's message.
. "$CB_SRCDIR/tests/support/lib.sh"
need_mpirun

CB_RUN_TIMEOUT=30
# The launcher runs the program with the words of $CB_TMP/args.RANK.
cat >"$CB_TMP/per_rank.sh" <<LAUNCHER
#!/bin/sh
rank=\${OMPI_COMM_WORLD_RANK:-\${PMI_RANK:-\${PMIX_RANK:-}}}
[ -n "\$rank" ] || { echo "per_rank.sh: the launcher set no rank variable" >&2; exit 99; }
# shellcheck disable=SC2046
exec "$CB_BIN" \$(cat "$CB_TMP/args.\$rank") "\$@"
LAUNCHER
chmod +x "$CB_TMP/per_rank.sh"

# Each case, separated by tabs: the option named, rank 0's value, rank 1's
# value, rank 0's arguments, rank 1's arguments ("none": no arguments).
# -N and --min-busbw were once agreed as part of -o, and named so.
cases=$(cat <<'CASES'
-n/--iters	'1'	'2'	-n 1	-n 2
-o/--op	'allreduce'	'broadcast'	-o allreduce	-o broadcast
-c/--check	'1'	'0'	-c 1	-c 0
-w/--warmup	'1'	'3'	-w 1	-w 3
--budget	'0'	'5'	none	--budget 5
-b/--minbytes	'8'	'16'	-b 8	-b 16
--layout	'row'	'col'	--layout row	--layout col
-d/--datatype	'float'	'double'	-d float	-d double
-r/--root	'0'	'1'	-o broadcast -r 0	-o broadcast -r 1
--split	'(none)'	'size:1'	none	--split size:1
-h/--help	'not given'	'given'	none	-h
-T/--timeout	'300'	'60'	-T 300	-T 60
--check-timed	'not given'	'given'	none	--check-timed
--samples-json	'not given'	'given'	--json /dev/null	--json /dev/null --samples-json
-N/--cycles	'1'	'2'	-N 1	-N 2
--min-busbw	'0'	'1.5'	none	--min-busbw 1.5
-f/--stepfactor	'-f 4'	'-i 1K'	-f 4	-i 1K
--a2av-matrix	'uniform'	'hot:4:1'	none	--a2av-matrix hot:4
CASES
)
echo "$cases" | while IFS='	' read -r opt v0 v1 args0 args1; do
    [ "$args0" = none ] && args0=
    echo "$args0" >"$CB_TMP/args.0"
    echo "$args1" >"$CB_TMP/args.1"
    want="$opt differs between ranks: rank 0 has $v0, rank 1 has $v1"
    CB_RUN_BIN="$CB_TMP/per_rank.sh" run 2 -e 64
    [ "$rc" = 124 ] && fail "'$args0' / '$args1' did not finish within ${CB_RUN_TIMEOUT}s"
    expect_rc 2 "'$args0' on rank 0, '$args1' on rank 1"
    [ "$(grep -c '^nccl-collbench: ' "$CB_TMP/err")" = 1 ] || show_and_fail "'$args0' / '$args1': not exactly one message"
    grep '^nccl-collbench: ' "$CB_TMP/err" | grep -qF -- "$want" ||
        show_and_fail "'$args0' / '$args1': the message does not say: $want"
    grep -q '^ *[0-9]' "$CB_TMP/out" && show_and_fail "'$args0' / '$args1': measured"
    echo x >>"$CB_TMP/tried"
done || exit 1
[ "$(wc -l <"$CB_TMP/tried")" = "$(echo "$cases" | wc -l)" ] || fail "not every case ran"

# A command line that only another rank cannot parse: its message, naming
# the rank and the bad value, not just that the ranks differ.
echo "-n 1" >"$CB_TMP/args.0"
echo "-n abc" >"$CB_TMP/args.1"
CB_RUN_BIN="$CB_TMP/per_rank.sh" run 2 -e 64
expect_rc 2 "'-n abc' on rank 1 only"
[ "$(grep -c '^nccl-collbench: ' "$CB_TMP/err")" = 1 ] || show_and_fail "'-n abc' on rank 1: not exactly one message"
grep -qF "nccl-collbench: rank 1 (its command line differs from rank 0's): -n: 'abc' is not an integer" \
    "$CB_TMP/err" || show_and_fail "'-n abc' on rank 1: the message names neither the rank nor the value"

# Different spellings of the same parameters agree.
echo "-n 2 -b 1K" >"$CB_TMP/args.0"
echo "--iters=2 --minbytes 1024" >"$CB_TMP/args.1"
CB_RUN_BIN="$CB_TMP/per_rank.sh" run 2 -e 1K
expect_rc 0 "the same parameters spelled differently"
has 1 '^ *1024 '
echo "ok"
