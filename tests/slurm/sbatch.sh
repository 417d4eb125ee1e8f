# README.md's batch script, as written there (only the sizes made small),
# submitted with sbatch to a real Slurm cluster of nodes with 8 GPUs
# (through the NCCL stand-in, as nccl-collbench on PATH): the job completes
# (0:0), its output file holds the table of 16 ranks on 2 nodes, each on a
# GPU of its own, verified, and the per-job CSV file agrees.
. "$CB_SRCDIR/tests/support/lib.sh"
. "$CB_SRCDIR/tests/nccl/standin/lib.sh"
. "$CB_SRCDIR/tests/cluster/cluster.sh"
. "$CB_SRCDIR/tests/slurm/slurm.sh"
need_standin
need_python
slurm_need

# The script: the first sh block of README's Slurm section.
awk '/^## Slurm$/ { in_section = 1; next }
     /^## / { in_section = 0 }
     in_section && /^```sh$/ && !done { in_block = 1; next }
     in_block && /^```$/ { in_block = 0; done = 1 }
     in_block' "$CB_SRCDIR/README.md" >"$CB_TMP/readme.sh"
grep -q '^#SBATCH ' "$CB_TMP/readme.sh" && grep -q 'srun --mpi=pmix nccl-collbench' "$CB_TMP/readme.sh" ||
    fail "README.md's Slurm section has no batch script: $(cat "$CB_TMP/readme.sh")"
grep -q -- '-b 8 -e 1G' "$CB_TMP/readme.sh" || fail "README's script changed its sizes: update this test"
mkdir "$CB_TMP/job" "$CB_TMP/bin"
sed 's/-b 8 -e 1G/-b 8 -e 256 -n 2 -w 1/' "$CB_TMP/readme.sh" >"$CB_TMP/job/job.sh"
ln -s "$CB_STANDIN_BIN" "$CB_TMP/bin/nccl-collbench"

CB_SLURM_GPUS=8 slurm_up 2
# A job whose ranks crashed in Open MPI's start (see slurm_start_failed in
# slurm.sh) is submitted again, at most twice.
tries=0
while :; do
    slurm_run sh -c 'cd "$1" && PATH="$2:$PATH" exec sbatch --parsable job.sh' sh "$CB_TMP/job" "$CB_TMP/bin"
    expect_rc 0 "sbatch README's script"
    job=$(cat "$CB_TMP/out")
    result=$(CB_SLURM_TIMEOUT=120 slurm_wait_job "$job")
    out="$CB_TMP/job/$job.out"
    [ "$result" = "FAILED 139:0" ] && grep -q 'Process received signal' "$out" &&
        ! grep -q '^# nccl-collbench ' "$out" && [ "$tries" -lt 2 ] || break
    tries=$((tries + 1))
    echo "note: job $job's ranks crashed in Open MPI's start; submitting again" >&2
done
[ "$result" = "COMPLETED 0:0" ] || { cat "$out" >&2; fail "job $job ended '$result'"; }
cp "$out" "$CB_TMP/out"
slurm_devices 16 2
has 1 '^# ranks: 16  nodes: 2  ranks per node: 8$'
has 1 '^# backend: nccl '
has 1 '^# Out of bounds values : 0 OK$'
check check-sweep --table "$CB_TMP/out" --csv "$CB_TMP/job/$job.csv" --ranks 16 \
    --sizes 8,16,32,64,128,256 --collective allreduce --wrong 0
echo ok
