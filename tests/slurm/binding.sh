# Every way of binding GPUs that README.md and nccl-collbench-collectives(7)
# promise, on a real Slurm cluster through the NCCL stand-in (4 GPUs a node,
# CUDA_VISIBLE_DEVICES as Slurm sets it): 2 nodes of 4 tasks, and each rank
# drives a GPU of its own (by bus id) whichever way they were bound; two
# tasks on one GPU are refused (status 1, naming the host and the GPU).
. "$CB_SRCDIR/tests/support/lib.sh"
. "$CB_SRCDIR/tests/nccl/standin/lib.sh"
. "$CB_SRCDIR/tests/cluster/cluster.sh"
. "$CB_SRCDIR/tests/slurm/slurm.sh"
need_standin
need_python
slurm_need
slurm_up 4
NCCL="$CB_STANDIN_BIN --backend nccl -o allreduce -b 8 -e 1K -n 2 -w 1"

# bound WHAT SRUN-OPTIONS...: 8 ranks on 2 nodes, each on its own GPU.
bound() {
    what=$1
    shift
    slurm_run srun --mpi=pmix -N2 --ntasks-per-node=4 "$@"
    expect_rc 0 "$what"
    slurm_devices 8 2
    has 1 '^# Out of bounds values : 0 OK$'
}
bound "--gpus-per-task=1" --gpus-per-task=1 $NCCL
# Each task was given its own: every rank sees one GPU, as device 0.
[ "$(grep -c '^#  Rank .* device  0 ' "$CB_TMP/out")" = 8 ] ||
    show_and_fail "--gpus-per-task=1: not every rank's device is 0"
bound "--gpus-per-node=4" --gpus-per-node=4 $NCCL
# Every task sees the node's 4: local rank r drives device r.
for r in 0 1 2 3; do
    [ "$(grep -c "^#  Rank .* device  $r " "$CB_TMP/out")" = 2 ] ||
        show_and_fail "--gpus-per-node=4: device $r is not driven by one rank a node"
done
bound "--gpu-bind=single:1" --gpus-per-node=4 --gpu-bind=single:1 $NCCL
cat >"$CB_TMP/localid.sh" <<'WRAP'
#!/bin/sh
CUDA_VISIBLE_DEVICES=$SLURM_LOCALID
export CUDA_VISIBLE_DEVICES
exec "$@"
WRAP
chmod +x "$CB_TMP/localid.sh"
bound "a wrapper setting CUDA_VISIBLE_DEVICES=\$SLURM_LOCALID" --gpus-per-node=4 "$CB_TMP/localid.sh" $NCCL

# Two tasks of a node on one GPU: refused on every rank, whichever way.
refused() {
    what=$1
    shift
    slurm_run srun --mpi=pmix -N1 --ntasks-per-node=2 "$@"
    expect_rc 1 "$what"
    grep -q '^nccl-collbench: rank 0 (h0): .*host h0: ranks 0 and 1 would both drive GPU 0000:01:00.0' "$CB_TMP/err" ||
        show_and_fail "$what: the refusal does not name the host, the ranks and the GPU"
    grep -q '^#  Rank\|^ *8 ' "$CB_TMP/out" && show_and_fail "$what: measured anyway"
    true
}
refused "2 tasks, --gpus-per-node=1" --gpus-per-node=1 -w h0 $NCCL
cat >"$CB_TMP/gpu0.sh" <<'WRAP'
#!/bin/sh
CUDA_VISIBLE_DEVICES=0 exec "$@"
WRAP
chmod +x "$CB_TMP/gpu0.sh"
refused "2 tasks, a wrapper giving both GPU 0" --gpus-per-node=4 -w h0 "$CB_TMP/gpu0.sh" $NCCL
echo ok
