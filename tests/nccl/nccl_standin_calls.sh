# bench/calls.sh through the CPU stand-in: the library and runtime calls
# inside the NCCL backend's timed span, per timed iteration, equal those of
# the bare loop set up as nccl-tests (a blocking communicator, ncclMemAlloc
# buffers, one event pair around the iterations), for -m 1, -m 4 and -G 2.
# A launch on a non-blocking communicator (its ncclInProgress) or an event
# recorded per iteration would make them differ.
. "$CB_SRCDIR/tests/support/lib.sh"
. "$CB_SRCDIR/tests/nccl/standin/lib.sh"
standin_setup 2
BARE="$CB_BUILDDIR/tests/bare-nccl-allreduce-standin"
[ -x "$BARE" ] || fail "$BARE was not built"
rc=0
TOOL="$CB_STANDIN_BIN" BARE="$BARE" MPIRUN="$CB_MPIRUN" NP=2 ITERS=8 \
    timeout -k 5 180 sh "$CB_SRCDIR/bench/calls.sh" >"$CB_TMP/out" 2>"$CB_TMP/err" || rc=$?
expect_rc 0 "bench/calls.sh"
for mode in "-m 1" "-m 4" "-G 2"; do
    has 1 "^$mode  *[0-9.]*  *[0-9.]*  *yes  "
done
has 1 '^-m 1  *1\.00  *1\.00  *yes  ncclAllReduce:8$'
echo "ok"
