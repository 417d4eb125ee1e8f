# Shared by the tests of the NCCL backend through the CPU stand-in
# (tests/nccl/nccl_standin_*.sh); sourced after tests/support/lib.sh. Every run() of
# these tests launches the stand-in program instead of the real one.
CB_STANDIN_BIN="$CB_BUILDDIR/tests/nccl-collbench-standin"
CB_RUN_BIN=$CB_STANDIN_BIN

need_standin() {
    [ -x "$CB_STANDIN_BIN" ] ||
        skip "the NCCL backend was not built (configure found no CUDA and NCCL), so neither was its stand-in program"
}

# standin_setup GPUS [python] [trace]: how every stand-in test begins. It
# skips (77) unless the stand-in program and a launcher are there, and with
# "python" unless python3 is, for the checks; the stand-in's machine gets
# GPUS GPUs; with "trace" each rank traces its calls into $CB_TMP/trace.RANK,
# which fresh_trace empties.
standin_setup() {
    need_standin
    need_mpirun
    CB_STANDIN_GPUS=$1
    export CB_STANDIN_GPUS
    shift
    for what in "$@"; do
        case $what in
        python) need_python ;;
        trace)
            CB_STANDIN_TRACE="$CB_TMP/trace"
            export CB_STANDIN_TRACE
            ;;
        *) fail "standin_setup: unknown word '$what'" ;;
        esac
    done
}

fresh_trace() {
    rm -f "$CB_TMP"/trace.*
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
