# --expect FILE: a site's floors. A rule applies from its size on, to rows
# of its collective (or *) whose every rank matches its GPU model or host
# pattern; rows below --expect-ratio x its GB/s are "Below expectation" and
# status 8. A bad file is a usage error (status 2) naming the file and the
# line, on every rank; so are bad values of --expect and --expect-ratio.
. "$CB_SRCDIR/tests/support/lib.sh"
. "$CB_SRCDIR/tests/expect/lib.sh"
need_mpirun
need_python
SWEEP="-b 1K -e 64K -f 8 -n 2 -w 1"

cat >"$CB_TMP/floors" <<'EOF'
# floors of this test: allreduce from 8K cannot be met, alltoall always is
gpu:*      allreduce  8K  1e9
host:*     alltoall   1K  1e-9    # every host
host:none-* alltoall  1K  1e9     # no host matches: never applies
EOF
run 2 --backend mpi -o allreduce,alltoall,barrier $SWEEP --expect "$CB_TMP/floors" \
    --csv "$CB_TMP/e.csv"
expect_rc 8 "floors below"
has 1 "^# Expectation (--expect $CB_TMP/floors): 3 rules; "
has 4 '^# Below expectation: '
has 2 '^# Below expectation: allreduce float sum 8192 B \(out-of-place\|in-place\) busbw [0-9.]* GB/s is [0-9.]* of expected 1000000000.00 GB/s (--expect-ratio 0.8)$'
has 0 '^# Below expectation: .* \(1024 B\|alltoall\)'
csv_expected "$CB_TMP/e.csv" >"$CB_TMP/rows"
"$CB_PYTHON" - "$CB_TMP/rows" <<'PY' || { cat "$CB_TMP/rows" >&2; fail "expected busbw per row"; }
import sys
for line in open(sys.argv[1]):
    coll, size, place, expected, eff, busbw = line.split()
    if coll == "barrier" or (coll == "allreduce" and size == "1024"):
        assert expected == "-" and eff == "-", line
    elif coll == "allreduce":
        assert float(expected) == 1e9, line
    else:
        assert float(expected) == 1e-9 and float(eff) > 1, line
PY

# A file none of whose rules applies to any row judged nothing: status 6,
# a note naming the host and GPU model, the verdict UNCHECKED (issue 36).
printf 'host:none-* * 1K 1e9\ngpu:*H100* * 1K 1e9\n' >"$CB_TMP/none"
run 2 --backend mpi -o allreduce $SWEEP --expect "$CB_TMP/none" --csv "$CB_TMP/e.csv" \
    --json "$CB_TMP/e.json"
expect_rc 6 "no rule matches"
has 0 '^# Below expectation'
has 1 "^# No expectation: --expect $CB_TMP/none: none of its 2 rules applies to any row (host [^ ]*, GPU model .*): nothing was judged$"
has 1 '^# Result: UNCHECKED (6 rows with no expectation) 6 measurements in '
"$CB_PYTHON" - "$CB_TMP/e.json" <<'PY' || fail "no rule matches: JSON"
import json, sys
s = json.load(open(sys.argv[1]))["summary"]
assert s["exit_status"] == 6 and s["verdict"] == "UNCHECKED" and s["no_expectation"] == 6, s
PY
# One rule that applies is enough: rows no rule covers are not gated.
printf 'host:none-* * 1K 1e9\nhost:* allreduce 64K 1e-9\n' >"$CB_TMP/some"
run 2 --backend mpi -o allreduce $SWEEP --expect "$CB_TMP/some"
expect_rc 0 "one rule applies"
has 0 '^# No expectation'

# A bad file: status 2, one message naming the file and the line.
bad_file() {
    printf "$2" >"$CB_TMP/bad"
    run 2 --backend mpi -o allreduce $SWEEP --expect "$CB_TMP/bad"
    expect_rc 2 "bad file: $1"
    n=$(grep '^nccl-collbench: ' "$CB_TMP/err" | grep -cF -- "--expect: $CB_TMP/bad:$1")
    [ "$n" = 1 ] || show_and_fail "bad file: $n messages naming $CB_TMP/bad:$1"
    grep -q "^Try 'nccl-collbench --help'" "$CB_TMP/err" || show_and_fail "bad file: no usage hint"
}
bad_file "3: 'allreduse' is not a collective" '# floors\n\nhost:* allreduse 1K 10\n'
bad_file "2: 3 fields, expected 4" 'gpu:* * 1K 10\ngpu:* * 1K\n'
bad_file "1: 'fast' is not a positive number of GB/s" 'gpu:* * 1K fast\n'
bad_file "1: 'rack:*': MATCH is gpu:PATTERN or host:PATTERN" 'rack:* * 1K 10\n'
bad_file " no rule" '# nothing\n'
run 2 --backend mpi -o allreduce $SWEEP --expect "$CB_TMP/missing"
expect_rc 2 "a file that is not there"
grep -q -- "--expect: $CB_TMP/missing: cannot be read: No such file or directory" "$CB_TMP/err" ||
    show_and_fail "no message naming the missing file"

# The options' values.
run 1 --backend mpi --expect ''
expect_rc 2 "--expect ''"
grep -q -- "--expect: give auto or a file" "$CB_TMP/err" || show_and_fail "--expect ''"
for bad in 0 1.5 -1 abc; do
    run 1 --backend mpi --expect auto --expect-ratio "$bad"
    expect_rc 2 "--expect-ratio $bad"
    grep -q -- "--expect-ratio: '$bad' is not a number above 0 and at most 1" "$CB_TMP/err" ||
        show_and_fail "--expect-ratio $bad: no message naming the value"
done
run 1 --backend mpi -b 1K -e 1K -n 1 --efficiency
expect_rc 0 "--efficiency without --expect"
has 1 '^# --efficiency and --expect-ratio have no effect without --expect$'
echo "ok"
