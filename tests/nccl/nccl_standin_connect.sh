# The memory of NCCL's connections, by the NCCL version the stand-in
# reports (docs/design/nccl-contract.md, G4): before 2.22 NCCL connects
# every channel while the communicator is created (init.cc,
# initTransportsRank, v2.21.5-1); from 2.22 an algorithm is connected when
# a task first uses it (runtimeConn, v2.22.3-1). CB_STANDIN_CONNECT_BYTES
# makes those connections cost device memory. The backend measures the
# free memory for its plan after its warm-up (ops.c, nccl_memory_available
# after warm_up_each_kind), so the largest size it plans shrinks by the
# connections at every version; one that measured before the warm-up would
# plan for memory that NCCL takes at 2.22 and later, and fails here. From
# 2.22, NCCL_RUNTIME_CONNECT=0 connects at creation again ("comm->runtimeConn
# = comm->cuMemSupport && ncclParamRuntimeConnect()", init.cc, v2.22.3-1 to
# v2.30.7-1): the plan shrinks the same.
. "$CB_SRCDIR/tests/support/lib.sh"
. "$CB_SRCDIR/tests/nccl/standin/lib.sh"
standin_setup 2 python trace

# As nccl_standin_sweep.sh: 1 GiB of headroom, the 64 MiB scratch buffer,
# and 10 MiB per device; connections of 6 MiB leave 4 MiB per rank, of
# which the engine gives its two buffers 80%: the largest size falls from
# 16 MiB to 1 MiB (4 MiB without the connections).
CB_STANDIN_GPU_MEM=$((1073741824 + 67108864 + 10485760))
export CB_STANDIN_GPU_MEM
for version in 22105 22203 22809 22809-creation; do
    runtime=1
    case $version in
        *-creation) version=${version%-creation} runtime=0 ;;
    esac
    fresh_trace
    NCCL_RUNTIME_CONNECT=$runtime CB_STANDIN_CONNECT_BYTES=6291456 \
        CB_STANDIN_NCCL_VERSION=$version run 2 --backend nccl -b 1M -e 16M -n 1 -c 1
    expect_rc 0 "connections of 6 MiB at $version, NCCL_RUNTIME_CONNECT=$runtime"
    has 1 '^# largest size lowered from 16777216 to 1048576 bytes: 4194304 bytes available per rank'
    standin_check trace --prefix "$CB_TMP/trace" --ranks 2 --teardown destroy
    case $version,$runtime in
        22105,*) when="at creation (before 2.22)" ;;
        *,0) when="at creation (no runtime connection)" ;;
        *) when="at first use" ;;
    esac
    for r in 0 1; do
        [ "$(grep -c "^NCCL connections 6291456 bytes $when" "$CB_TMP/trace.$r")" = 1 ] ||
            show_and_fail "$version, rank $r: the connections were not made $when"
    done
    echo "ok: connections of 6 MiB at $version, NCCL_RUNTIME_CONNECT=$runtime"
done
echo "ok"
