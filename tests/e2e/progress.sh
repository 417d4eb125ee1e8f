# Progress shows by default where the person at the terminal sees it and
# the table goes elsewhere, under mpirun too (whose ranks write to pipes):
# run in a pseudo-terminal (script), with the table in a file. Not when the
# table is on the terminal, nor with --no-progress, nor where stderr goes
# to a pipe or there is no terminal; --progress forces it there.
. "$CB_SRCDIR/tests/support/lib.sh"
need_mpirun
command -v script >/dev/null 2>&1 || skip "no script (util-linux) to run the launcher in a terminal"
SWEEP="-b 1K -e 64K -f 4 -n 2 -w 1"

# in_terminal NAME COMMAND: COMMAND in a new pseudo-terminal; what the
# terminal showed in $CB_TMP/NAME.tty.
in_terminal() {
    name=$1
    shift
    rc=0
    timeout -k 5 120 script -qec "$*" "$CB_TMP/$name.tty" </dev/null >/dev/null 2>&1 || rc=$?
    [ -f "$CB_TMP/$name.tty" ] || skip "script made no typescript here"
}

in_terminal plain "$CB_MPIRUN -np 2 $CB_BIN $SWEEP >$CB_TMP/plain.table"
[ "$rc" = 0 ] || fail "the run in a terminal: status $rc: $(cat "$CB_TMP/plain.tty")"
grep -q 'progress' "$CB_TMP/plain.table" && fail "progress went into the table's file"
if grep -q 'progress: collective 1 of 1, allreduce float sum: 4 of 4 sizes' "$CB_TMP/plain.tty"; then
    # One line, rewritten in place: each report begins by erasing the last.
    grep -q "$(printf '\r\033')\\[K# progress" "$CB_TMP/plain.tty" ||
        fail "progress is not one line rewritten"
elif [ "$CB_LAUNCHER" = ompi4 ]; then
    # Open MPI 4.1's mpirun is the launcher this was made and shown with.
    fail "no progress on the terminal under mpirun: $(cat "$CB_TMP/plain.tty")"
else
    echo "note: under $CB_LAUNCHER no progress reaches the terminal by default"
fi

in_terminal no "$CB_MPIRUN -np 2 $CB_BIN $SWEEP --no-progress >$CB_TMP/no.table"
[ "$rc" = 0 ] || fail "--no-progress in a terminal: status $rc"
grep -q '# progress' "$CB_TMP/no.tty" && fail "--no-progress still reported progress"

in_terminal shared "$CB_MPIRUN -np 2 $CB_BIN $SWEEP"
[ "$rc" = 0 ] || fail "table on the terminal: status $rc"
grep -q '# progress' "$CB_TMP/shared.tty" && fail "progress mixed into the table on the terminal"
grep -q '65536' "$CB_TMP/shared.tty" || fail "the table did not reach the terminal"

# stderr into a pipe (a pager, tee): nobody at the terminal sees it there.
in_terminal piped "$CB_MPIRUN -np 2 $CB_BIN $SWEEP 2>&1 >$CB_TMP/piped.table | cat >$CB_TMP/piped.err"
[ "$rc" = 0 ] || fail "stderr into a pipe: status $rc"
grep -q 'progress' "$CB_TMP/piped.err" && fail "progress went into a pipe by default"

# No terminal at all (as in cron or a batch job): none; with --progress,
# whole lines.
run 2 $SWEEP
expect_rc 0 "the run without a terminal"
grep -q 'progress' "$CB_TMP/err" && fail "progress without a terminal"
run 2 $SWEEP --progress
expect_rc 0 "--progress without a terminal"
[ "$(grep -c "^# progress: " "$CB_TMP/err")" = 4 ] || fail "--progress: $(cat "$CB_TMP/err")"
echo "ok"
