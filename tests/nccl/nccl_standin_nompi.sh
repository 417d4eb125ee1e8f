# The stand-in without MPI (issue 39): tests/standin-nompi links no MPI and
# launches nothing through mpirun; it forks its ranks, which bootstrap
# through the ncclUniqueId as NCCL's ranks do (tests/nccl/standin/bootstrap.c),
# then all-reduce, all-gather and split over the stand-in's own connections.
# 1. The stand-in's objects hold no reference to an MPI symbol.
# 2. 2 and 3 ranks: every result right, every rank exits 0.
# 3. A rank that fails before the bootstrap (CB_STANDIN_FAIL_COMMINIT, the
#    process's rank from RANK as torchrun gives it) leaves the others
#    waiting: the run does not end by itself.
. "$CB_SRCDIR/tests/support/lib.sh"
. "$CB_SRCDIR/tests/nccl/standin/lib.sh"
need_standin
prog="$CB_BUILDDIR/tests/standin-nompi"
lib="$CB_BUILDDIR/tests/standin-whole/libcbstandin.so"
[ -x "$prog" ] || skip "tests/standin-nompi was not built"
if command -v nm >/dev/null 2>&1 && [ -f "$lib" ]; then
    ! nm -u "$lib" | grep -q ' MPI_' || fail "the stand-in library references MPI: $(nm -u "$lib" | grep ' MPI_' | head -3)"
fi
unset CB_STANDIN_TRACE OMPI_COMM_WORLD_RANK PMI_RANK PMIX_RANK RANK SLURM_PROCID
CB_STANDIN_GPUS=1
export CB_STANDIN_GPUS
for n in 2 3; do
    rc=0
    timeout -k 5 60 "$prog" "$n" >"$CB_TMP/out" 2>"$CB_TMP/err" || rc=$?
    [ "$rc" = 0 ] || show_and_fail "$n ranks without MPI: exit status $rc"
done
# Rank 1 (RANK=1, set by the program in its child) fails and exits; rank 0
# waits for it in the bootstrap until timeout ends it.
rc=0
CB_STANDIN_FAIL_COMMINIT=1 timeout -k 5 5 "$prog" 2 >"$CB_TMP/out" 2>"$CB_TMP/err" || rc=$?
[ "$rc" = 124 ] || show_and_fail "a rank failing before the bootstrap: exit status $rc, expected 124 (waiting)"
echo "ok"
