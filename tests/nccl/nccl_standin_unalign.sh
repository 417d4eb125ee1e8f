# -u through the CPU stand-in: the addresses the NCCL backend hands the
# library are the allocation (256-byte aligned, as cudaMalloc's) moved by N
# elements of the type measured, in every collective call and both
# placements, by the alignment the stand-in traces for each call (align=);
# with buffers registered (-R 1) and in a symmetric window (-R 2) too; every
# result verified, and no buffer or copy reaching past its allocation
# (which the stand-in flags, as a GPU would fault).
. "$CB_SRCDIR/tests/support/lib.sh"
. "$CB_SRCDIR/tests/nccl/standin/lib.sh"
standin_setup 3 trace

# aligns: the distinct align= values (of the lower buffer) of the collective
# calls on the measured buffers in every rank's trace, space separated.
# (Sends and receives move blocks at offsets that depend on the size; calls
# of one element are the backend's own, on buffers of its own.)
aligns() {
    grep -hE '^nccl(AllReduce|AllGather|ReduceScatter|Broadcast|Reduce|AlltoAll|Gather|Scatter) count=([2-9]|[1-9][0-9])' \
        "$CB_TMP"/trace.* | sed -n 's/.* align=\([0-9]*\)$/\1/p' | sort -un | tr '\n' ' '
}

# unalign N TYPE WANT [ARGS]: the run is verified clean and every call's
# buffers share exactly WANT bytes of alignment.
unalign() {
    n=$1 type=$2 want=$3
    shift 3
    fresh_trace
    run 3 --backend nccl -u "$n" -o all -d "$type" -b 96 -e 6K -f 8 -n 2 "$@"
    expect_rc 0 "-u $n -d $type $*"
    grep -q '^# Out of bounds values : 0 OK$' "$CB_TMP/out" || show_and_fail "-u $n -d $type: not verified"
    # Every buffer and copy inside its allocation (the stand-in's bounds).
    grep -q VIOLATION "$CB_TMP/err" "$CB_TMP"/trace.* && show_and_fail "-u $n -d $type: a VIOLATION"
    got=$(aligns)
    [ "$got" = "$want " ] || fail "-u $n -d $type $*: the library saw alignments '$got', not '$want'"
}

unalign 0 float 256
unalign 1 float 4
unalign 1 double 8
unalign 3 half 2
unalign 2 double 16
unalign 1 int8 1 -R 1
unalign 8 float 32 -R 2
echo "ok"
