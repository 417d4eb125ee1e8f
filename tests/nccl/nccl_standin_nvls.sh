# NVLS buffers on a device with multicast (issue 35 section 3;
# docs/design/nccl-contract.md, G4 and G9): NCCL 2.18 to 2.21 map them
# while each communicator is created (transport/nvls.cc, ncclNvlsSetup,
# called by init.cc initTransportsRank, v2.21.5-1), 2.22 on only their
# credits then and the buffers when a collective first runs NVLS
# (ncclNvlsBufferSetup, group.cc ncclCollPreconnectFunc, v2.28.9-1);
# NCCL_NVLS_ENABLE=0 maps none. Four ranks: before 2.28.7 NCCL uses NVLS
# only with more than 2 GPUs on the node (ncclNvlsInit, "gpuCount <= 2").
#
# Per rank, with 16 channels and 4 heads: 2.21.5 maps 16 * 2 * (8 * 128 KiB
# + 2 MiB) * 4 = 384 MiB at creation; 2.28.9 maps 2 MiB of credits at
# creation and 16 * 2 * 8 * 128 KiB * 4 = 128 MiB at the first collective,
# the backend's warm-up. The backend measures its plan after the warm-up
# (ops.c, nccl_memory_available), so the largest size shrinks by them at
# both versions. A default run holds the buffers of exactly as many
# communicators per GPU as its preamble says it holds (one); hier_allreduce's
# inner child, which shares nothing with its parent, maps its own at
# creation, as issue 35 says of every later split before 2.22.
. "$CB_SRCDIR/tests/support/lib.sh"
. "$CB_SRCDIR/tests/nccl/standin/lib.sh"
standin_setup 4 python trace

CB_STANDIN_MULTICAST_GRANULARITY=2097152
export CB_STANDIN_MULTICAST_GRANULARITY
mib=1048576

# nvls_lines RANK WHEN: how many NVLS mappings RANK's trace shows WHEN.
nvls_lines() {
    grep -c "^NVLS buffers [0-9]* bytes $2" "$CB_TMP/trace.$1"
}

# line_of RANK PATTERN: the number of the first line of RANK's trace that
# matches PATTERN (0: none), to tell what came before the first collective.
line_of() {
    n=$(grep -n -m1 -- "$2" "$CB_TMP/trace.$1" | cut -d: -f1)
    echo "${n:-0}"
}

for case in 22105 22809 22809-off; do
    version=${case%-off} enable=2 at_creation=$((384 * mib)) at_first_use=0
    case $case in
        *-off) enable=0 at_creation=0 ;;
        22809) at_creation=$((2 * mib)) at_first_use=$((128 * mib)) ;;
    esac
    # As connect.sh: 1 GiB of headroom, the 64 MiB scratch buffer, the
    # NVLS buffers and 4 MiB, of which the engine gives its two buffers
    # 80%: the largest size falls from 16 MiB to 1 MiB.
    CB_STANDIN_GPU_MEM=$((1073741824 + 67108864 + at_creation + at_first_use + 4 * mib))
    fresh_trace
    NCCL_NVLS_ENABLE=$enable CB_STANDIN_GPU_MEM=$CB_STANDIN_GPU_MEM \
        CB_STANDIN_NCCL_VERSION=$version run 4 --backend nccl -b 1M -e 16M -n 1 -c 1
    expect_rc 0 "$case: NVLS buffers of $at_creation and $at_first_use bytes"
    has 1 '^# largest size lowered from 16777216 to 1048576 bytes: 4194304 bytes available per rank'
    has 1 '^# communicators: 1 per rank '
    standin_check trace --prefix "$CB_TMP/trace" --ranks 4 --teardown destroy
    for r in 0 1 2 3; do
        if [ "$enable" = 0 ]; then
            [ "$(grep -c '^NVLS buffers' "$CB_TMP/trace.$r")" = 0 ] ||
                show_and_fail "$case, rank $r: NVLS buffers with NCCL_NVLS_ENABLE=0"
            continue
        fi
        # One communicator's buffers per GPU, as the preamble says.
        [ "$(nvls_lines "$r" "at creation$")" = 1 ] &&
            [ "$(grep -c "^NVLS buffers $at_creation bytes at creation$" "$CB_TMP/trace.$r")" = 1 ] ||
            show_and_fail "$case, rank $r: not one communicator's $at_creation bytes at creation"
        first=$(line_of "$r" '^nccl[A-Za-z]* count=')
        made=$(line_of "$r" '^NVLS buffers [0-9]* bytes at creation$')
        [ "$made" -gt 0 ] && [ "$made" -lt "$first" ] ||
            show_and_fail "$case, rank $r: the creation's NVLS buffers not before the first collective"
        if [ "$at_first_use" = 0 ]; then
            [ "$(grep -c '^NVLS buffers' "$CB_TMP/trace.$r")" = 1 ] ||
                show_and_fail "$case, rank $r: more NVLS buffers than the creation's before 2.22"
        else
            used=$(line_of "$r" "^NVLS buffers $at_first_use bytes at first use")
            [ "$(grep -c '^NVLS buffers' "$CB_TMP/trace.$r")" = 2 ] && [ "$used" = $((first + 1)) ] ||
                show_and_fail "$case, rank $r: not $at_first_use bytes at the first collective"
        fi
    done
    echo "ok: $case"
done

# hier_allreduce's inner group (the node: all 4 ranks) is a split child
# that shares nothing: at 2.21.5 it maps a second communicator's 384 MiB
# at its creation on every rank; its leaders' group (1 rank) maps none.
fresh_trace
CB_STANDIN_NCCL_VERSION=22105 run 4 --backend nccl -o hier_allreduce -b 1K -e 1K -n 1 -c 1
expect_rc 0 "hier_allreduce at 2.21.5"
standin_check trace --prefix "$CB_TMP/trace" --ranks 4 --teardown destroy
for r in 0 1 2 3; do
    [ "$(grep -c "^NVLS buffers $((384 * mib)) bytes at creation$" "$CB_TMP/trace.$r")" = 2 ] &&
        [ "$(grep -c '^NVLS buffers' "$CB_TMP/trace.$r")" = 2 ] ||
        show_and_fail "hier_allreduce, rank $r: not two communicators' NVLS buffers"
done
echo "ok: hier_allreduce"
echo "ok"
