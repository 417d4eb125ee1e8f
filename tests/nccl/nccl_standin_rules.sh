# The stand-in's own strictness, case by case (tests/nccl/standin/rules.c):
# each case breaks one rule of NCCL or CUDA on purpose and fails unless the
# stand-in reacts as the real libraries do (waits, fails, defers the work,
# or writes its VIOLATION line). The backend's tests only show that the
# backend keeps the rules; this shows the stand-in still enforces them.
. "$CB_SRCDIR/tests/support/lib.sh"
. "$CB_SRCDIR/tests/nccl/standin/lib.sh"
standin_setup 2 trace
RULES="$CB_BUILDDIR/tests/nccl-standin-rules"
[ -x "$RULES" ] || skip "the stand-in's test program was not built"

for case in graph-abort device bootstrap async group memory redop inprogress bounds failed \
    abort-in-group kernel env-blocking launch-thread launch-threads destroy-error connect-memory group-modes config-blocking \
    register-null group-mixed group-create split-share split-share-env abort-inside \
    shrink-split capture-query capture-modes config-share runtime-connect memalloc-granularity \
    unready-unchecked window-deregister last-error capture-work capture-kernel \
    abort-group-version fail-at-group-end async-jobs; do
    fresh_trace
    CB_RUN_BIN=$RULES run 2 "$case"
    expect_rc 0 "rule case $case"
    [ "$(grep -c "^ok: $case " "$CB_TMP/out")" = 2 ] ||
        show_and_fail "rule case $case: not ok on both ranks"
    echo "ok: $case"
done
# NVLS needs more than 2 GPUs on the node before 2.28.7 (rules_nvls.c).
for case in nvls-memory nvls-split; do
    fresh_trace
    CB_STANDIN_GPUS=4 CB_RUN_BIN=$RULES run 4 "$case"
    expect_rc 0 "rule case $case"
    [ "$(grep -c "^ok: $case " "$CB_TMP/out")" = 4 ] ||
        show_and_fail "rule case $case: not ok on all 4 ranks"
    echo "ok: $case"
done
echo "ok"
