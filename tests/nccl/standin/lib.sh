# Shared by the tests of the NCCL backend through the CPU stand-in
# (tests/nccl/nccl_standin_*.sh); sourced after tests/support/lib.sh. Every run() of
# these tests launches the stand-in program instead of the real one.
CB_STANDIN_BIN="$CB_BUILDDIR/tests/nccl-collbench-standin"
CB_RUN_BIN=$CB_STANDIN_BIN

need_standin() {
    [ -x "$CB_STANDIN_BIN" ] ||
        skip "the NCCL backend was not built (configure found no CUDA and NCCL), so neither was its stand-in program"
}

# standin_check ARGS...: the stand-in's output and trace checks.
standin_check() {
    "$CB_PYTHON" "$CB_SRCDIR/tests/nccl/standin/check_standin.py" "$@" ||
        fail "stand-in check failed: $*"
}

# one_message TEXT: the last run printed exactly one nccl-collbench message,
# and it contains TEXT.
one_message() {
    n=$(grep -c '^nccl-collbench: ' "$CB_TMP/err")
    [ "$n" = 1 ] || show_and_fail "expected one message, got $n"
    grep '^nccl-collbench: ' "$CB_TMP/err" | grep -qF -- "$1" ||
        show_and_fail "the message does not contain '$1'"
}
