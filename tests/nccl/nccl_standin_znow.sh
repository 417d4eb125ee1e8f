# A program built on new headers starts on an older library, with -z now
# (docs/design/weak-symbols.md): the stand-in as a shared library, whole and
# lacking the calls of src/backends/nccl/weak.h (tests/nccl/standin/lacking.map),
# one soname; tests/nccl-collbench-znow linked with -z now against the whole
# one and run on each by LD_LIBRARY_PATH.
# 1. The failure mode: a program with a strong reference to ncclCommSplit,
#    linked the same way, does not start on the lacking library.
# 2. Every call of weak.h (and those of native.c and register.c) is a weak
#    reference in that program and in src/nccl-collbench, both
#    position-independent; the first is bound at start-up (BIND_NOW).
# 3. On the whole library all works: ncclCommInitRankConfig, hier_allreduce
#    (ncclCommSplit), premulsum, -o comm_init split and shrink, -B on the
#    device, NCCL's last error in a failure's message.
# 4. On the lacking library, at the same version, the program starts and
#    each use refuses or falls back, saying why: ncclCommInitRank, -B on the
#    host, premulsum and comm_init's split and shrink skipped,
#    hier_allreduce refused (status 1), a failure's message without NCCL's
#    last error; at 2.17, the version it models, an allreduce runs.
. "$CB_SRCDIR/tests/support/lib.sh"
. "$CB_SRCDIR/tests/nccl/standin/lib.sh"
standin_setup 2 trace
command -v readelf >/dev/null 2>&1 || skip "no readelf (binutils) to read the programs' symbols"
whole="$CB_BUILDDIR/tests/standin-whole"
lacking="$CB_BUILDDIR/tests/standin-lacking"
strong="$CB_BUILDDIR/tests/strong-split-znow"
CB_RUN_BIN="$CB_BUILDDIR/tests/nccl-collbench-znow"
calls="ncclCommSplit ncclCommShrink ncclGetLastError ncclCommInitRankConfig
ncclRedOpCreatePreMulSum ncclRedOpDestroy cudaLibraryLoadData cudaLibraryGetKernel
cudaLibraryUnload"
# Weak since before (nccl/native.c, nccl/register.c): checked weak too.
older="ncclAlltoAll ncclGather ncclScatter ncclCommRegister ncclCommDeregister ncclMemAlloc
ncclMemFree ncclCommWindowRegister ncclCommWindowDeregister"

# bind LIBDIR PROGRAM ARGS...: PROGRAM's status with the stand-in from LIBDIR.
bind() {
    dir=$1
    shift
    rc=0
    LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$@" >"$CB_TMP/out" \
        2>"$CB_TMP/err" || rc=$?
}

# 1. The failure mode that weak references remove.
bind "$whole" "$strong"
expect_rc 0 "a strong reference on the whole library"
bind "$lacking" "$strong"
[ "$rc" != 0 ] && grep -q 'undefined symbol: ncclCommSplit' "$CB_TMP/err" ||
    show_and_fail "a strong reference under -z now started on a library without ncclCommSplit"
echo "ok: a strong reference does not start on the lacking library"

# 2. Weak references, bound at start-up. FILE's dynamic symbols: "BIND NAME".
symbols() {
    readelf --dyn-syms -W "$1" | awk '$7 == "UND" { sub(/@.*/, "", $8); print $5, $8 }'
}
readelf -d "$CB_RUN_BIN" | grep -q 'FLAGS.*NOW' || fail "$CB_RUN_BIN is not linked with -z now"
programs=$CB_RUN_BIN
[ -x "$CB_BUILDDIR/src/nccl-collbench" ] && programs="$programs $CB_BUILDDIR/src/nccl-collbench"
for program in $programs; do
    # In a program not position-independent, the address of a call that a
    # library linked against has is a fixed entry of the program's own, never
    # NULL, so the checks of weak.h would call through address 0.
    readelf -h "$program" | grep -q 'Type: *DYN' ||
        fail "$program is not position-independent (PIE): weak.h's checks need that"
    symbols "$program" >"$CB_TMP/syms"
    for call in $calls $older; do
        grep -qx "WEAK $call" "$CB_TMP/syms" ||
            fail "$program: $call is not a weak reference: $(grep " $call\$" "$CB_TMP/syms")"
    done
done
for call in $calls; do
    readelf --dyn-syms -W "$whole/libcbstandin.so" | grep -q " $call\$" ||
        fail "the whole stand-in does not export $call"
    readelf --dyn-syms -W "$lacking/libcbstandin.so" | grep -q " $call\$" &&
        fail "the lacking stand-in exports $call"
done
echo "ok: every call of weak.h is weak in $programs"

# run_on LIBDIR NP ARGS...: the run helper with the stand-in from LIBDIR.
run_on() {
    dir=$1
    shift
    LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    export LD_LIBRARY_PATH
    run "$@"
    unset LD_LIBRARY_PATH
}
# init_config C: rank 0's trace made its communicator with config=C (1:
# ncclCommInitRankConfig; 0: ncclCommInitRank, which takes no config).
init_config() {
    grep -q "^ncclCommInitRank .* config=$1 " "$CB_TMP/trace.0" ||
        { cat "$CB_TMP/trace.0" >&2; fail "no ncclCommInitRank with config=$1 in the trace"; }
}
on_device='^# -B: each launch.s output is compared bit for bit .*, on the device'
allreduce="-o allreduce -b 64 -e 64 -n 1 -w 1"

# 3. The whole library.
fresh_trace
run_on "$whole" 2 --backend nccl $allreduce --redop sum,premulsum -B
expect_rc 0 "allreduce, premulsum, -B on the whole library"
init_config 1
has 1 "$on_device"
has 0 '^# skipped'
run_on "$whole" 2 --backend nccl -o hier_allreduce,comm_init -b 64 -e 64 -n 1 -w 1
expect_rc 0 "hier_allreduce and comm_init on the whole library"
grep -Eq '^ +0 +0 +- +split ' "$CB_TMP/out" && grep -Eq '^ +0 +0 +- +shrink ' "$CB_TMP/out" ||
    show_and_fail "no comm_init split or shrink row on the whole library"
CB_STANDIN_FAIL_ASYNC=1 run_on "$whole" 2 --backend nccl $allreduce
expect_rc 1 "an asynchronous error on the whole library"
grep -q '^nccl-collbench: .*NCCL reported an asynchronous error: .*: NCCL stand-in: injected' \
    "$CB_TMP/err" || show_and_fail "NCCL's last error is not in the message"
echo "ok: the whole library"

# 4. The lacking library at the same version.
fresh_trace
run_on "$lacking" 2 --backend nccl $allreduce --redop sum,premulsum -B
expect_rc 0 "allreduce, premulsum, -B on the lacking library"
init_config 0
has 1 '^# -B compares on the host (outputs copied from the GPU): the CUDA runtime loaded on rank 0 ([0-9.]*) does not export cudaLibraryLoadData$'
has 1 '^# skipped allreduce float premulsum: NCCL [0-9.]* has no premulsum (the library loaded does not export ncclRedOpCreatePreMulSum)$'
run_on "$lacking" 2 --backend nccl -o comm_init -n 1 -w 1
expect_rc 0 "comm_init on the lacking library"
for call in Split Shrink; do
    way=$(echo "$call" | tr S s)
    has 1 "^# comm_init $way skipped: NCCL [0-9.]* has no ncclComm$call (the library loaded does not export it)\$"
done
run_on "$lacking" 2 --backend nccl -o hier_allreduce -b 64 -e 64 -n 1 -w 1
expect_rc 1 "hier_allreduce on the lacking library"
one_message "has no ncclCommSplit (the library loaded does not export it)"
CB_STANDIN_FAIL_ASYNC=1 run_on "$lacking" 2 --backend nccl $allreduce
expect_rc 1 "an asynchronous error on the lacking library"
grep -q '^nccl-collbench: .*NCCL reported an asynchronous error: remote process exited or there was a network error$' \
    "$CB_TMP/err" || show_and_fail "the message without NCCL's last error is not as expected"
CB_STANDIN_NCCL_VERSION=21700 run_on "$lacking" 2 --backend nccl $allreduce -B
expect_rc 0 "allreduce on the lacking library as NCCL 2.17"
has 1 '^# backend: nccl (NCCL 2\.17\.0)'
echo "ok: the lacking library: the program starts, refuses or falls back, saying why"
