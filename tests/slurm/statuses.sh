# The exit statuses through Slurm, as README.md and nccl-collbench(1) say:
# srun exits with the program's status (every rank has the same), and a
# batch job ends FAILED with ExitCode STATUS:0 (COMPLETED 0:0 when it
# passed). 2 (a usage error), 3 (a hung rank, -T), 7 (a wrong element) and
# 8 (below --min-busbw), each through srun over 2 nodes and through sbatch;
# the fault layer's program makes the hang and the wrong element.
. "$CB_SRCDIR/tests/support/lib.sh"
. "$CB_SRCDIR/tests/cluster/cluster.sh"
. "$CB_SRCDIR/tests/slurm/slurm.sh"
slurm_need
slurm_up 4
FAULTY="$CB_BUILDDIR/tests/nccl-collbench-faulty"
SMALL="-b 1K -e 4K -n 2 -w 1"

# case STATUS WHAT PROGRAM ARGS...: one line of the cases below, with the
# fault layer's setting in $FAULT.
cases() {
    echo "2|usage error|$CB_BIN --backend mpi -b banana|"
    echo "3|a hung rank|$FAULTY --backend faulty-mpi $SMALL -T 3|hang:1:1024"
    echo "7|a wrong element|$FAULTY --backend faulty-mpi $SMALL|corrupt:1:3"
    echo "8|below --min-busbw|$CB_BIN --backend mpi $SMALL --min-busbw 100000|"
}

# Batch jobs first (they start in the background, one node each), srun's
# while they run.
cases >"$CB_TMP/cases"
while IFS='|' read -r want what cmd fault; do
    cat >"$CB_TMP/job$want.sh" <<JOB
#!/bin/sh
#SBATCH --nodes=1 --ntasks-per-node=2 --output=$CB_TMP/job$want.out --time=00:02:00
NCCL_COLLBENCH_TEST_FAULT=$fault
export NCCL_COLLBENCH_TEST_FAULT
srun --mpi=pmix $cmd
JOB
    slurm_run sbatch --parsable "$CB_TMP/job$want.sh"
    expect_rc 0 "sbatch ($what)"
    echo "$want $(cat "$CB_TMP/out")" >>"$CB_TMP/jobs"
done <"$CB_TMP/cases"

while IFS='|' read -r want what cmd fault; do
    NCCL_COLLBENCH_TEST_FAULT=$fault slurm_run srun --mpi=pmix -N2 --ntasks-per-node=2 $cmd
    expect_rc "$want" "srun, $what"
    case "$want" in
        2) grep -q '^nccl-collbench: ' "$CB_TMP/err" || show_and_fail "srun, $what: no message" ;;
        3) grep -q '^# Hang: ' "$CB_TMP/err" || show_and_fail "srun, $what: no hang report" ;;
        7) has 1 '^# Out of bounds values : [1-9][0-9]* FAILED$' ;;
    esac
done <"$CB_TMP/cases"

while read -r want job; do
    result=$(slurm_wait_job "$job")
    [ "$result" = "FAILED $want:0" ] || {
        cat "$CB_TMP/job$want.out" >&2
        fail "sbatch: job $job ended '$result', expected 'FAILED $want:0'"
    }
done <"$CB_TMP/jobs"
echo ok
