# nccl-tests' own tools/analyze_perf_json.py (2.19.6) reads our -J file
# with --all, --straggler and --nodes. Their script is not in our tree: it
# is read from a git repository of nccl-tests (NCCL_TESTS_GIT, by default
# the mirror this project's sessions fetch), and the test skips without one.
. "$CB_SRCDIR/tests/support/lib.sh"
need_mpirun
need_python
repo=${NCCL_TESTS_GIT:-/work/.mirror/NVIDIA+nccl-tests/repo}
script=$CB_TMP/analyze_perf_json.py
git -C "$repo" show v2.19.6:tools/analyze_perf_json.py >"$script" 2>/dev/null ||
    skip "no nccl-tests repository with v2.19.6 at $repo (set NCCL_TESTS_GIT)"

run 3 -o allreduce,broadcast -b 8 -e 4K -n 8 -I 1 -K 1 -J "$CB_TMP/t.json"
expect_rc 0 "-J -I 1"
for args in --all --straggler --nodes "--in-place --spikes"; do
    # shellcheck disable=SC2086
    "$CB_PYTHON" "$script" "$CB_TMP/t.json" $args >"$CB_TMP/a.out" 2>&1 ||
        { cat "$CB_TMP/a.out" >&2; fail "their analyzer failed with $args"; }
    grep -q 'Consistency (times_us == max over process rows, [A-Z]*): PASS' "$CB_TMP/a.out" ||
        { cat "$CB_TMP/a.out" >&2; fail "$args: their consistency check did not pass"; }
done
"$CB_PYTHON" "$script" "$CB_TMP/t.json" --nodes >"$CB_TMP/a.out" 2>&1
grep -q 'Node 0 (.*processes  0- 2)' "$CB_TMP/a.out" ||
    { cat "$CB_TMP/a.out" >&2; fail "--nodes did not group the 3 ranks by host"; }
"$CB_PYTHON" "$script" "$CB_TMP/t.json" --straggler >"$CB_TMP/a.out" 2>&1
grep -q 'fastest=process' "$CB_TMP/a.out" ||
    { cat "$CB_TMP/a.out" >&2; fail "--straggler found no process rows"; }
exit 0
