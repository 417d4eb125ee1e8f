# Options that would do nothing say so: -r without a rooted collective,
# --stable without --budget, --check-timed with -c 0, and --hier-split or
# --a2av-matrix without the collective they shape, --prom-sizes without
# --prom and --prom to a name node_exporter does not read get a note in the preamble; a size range in
# which no selected type has a whole element is a usage error (bad_input.sh)
# unless only collectives that move no data are selected, and so is one in
# which no size gives every rank a whole element.
. "$CB_SRCDIR/tests/support/lib.sh"
need_mpirun

run 2 -r 1 -b 8 -e 8 -n 2 --stable 3 --check-timed -c 0 --hier-split size:1 --a2av-matrix hot:4
expect_rc 0 "-r 1 with allreduce, --stable without --budget, --check-timed with -c 0, ..."
has 1 '^# -r has no effect: no collective selected has a root'
has 1 '^# --stable has no effect without --budget'
has 1 '^# --check-timed has no effect with -c 0'
has 1 '^# --hier-split has no effect: only hier_allreduce'
has 1 '^# --a2av-matrix has no effect: only alltoallv'
has 1 '^ *8 '

# Where they act, no note.
run 2 -r 1 -b 8 -e 64 -n 2 -o allreduce,broadcast,hier_allreduce,alltoallv --budget 5 --stable 3 \
    --check-timed --hier-split size:1 --a2av-matrix hot:4
expect_rc 0 "-r 1 with broadcast, --stable with --budget, ..."
has 0 'has no effect'

# --prom-sizes without --prom; --prom to a name node_exporter does not read.
run 2 -b 8 -e 8 -n 2 --prom-sizes largest
expect_rc 0 "--prom-sizes without --prom"
has 1 '^# --prom-sizes has no effect without --prom$'
run 2 -b 8 -e 8 -n 2 --prom "$CB_TMP/m.txt" --prom-sizes 8
expect_rc 0 "--prom m.txt"
has 1 "^# --prom $CB_TMP/m.txt: node_exporter's textfile collector reads only files whose names end in .prom"
run 2 -b 8 -e 8 -n 2 --prom "$CB_TMP/m.prom" --prom-sizes 8
expect_rc 0 "--prom m.prom --prom-sizes 8"
has 0 'prom'

# A type too large for the range, beside one that fits: the one that fits
# is measured, the other noted as skipped.
run 2 -b 1 -e 1 -d int8,float -n 2
expect_rc 0 "-b 1 -e 1 -d int8,float"
has 1 '^ *1 .* int8 '
has 1 'skipped allreduce float sum 1 B'

# A collective that moves no data needs no size.
run 2 -b 1 -e 1 -o barrier -n 2
expect_rc 0 "-b 1 -e 1 -o barrier"

# A size that holds an element but gives some rank none, in every
# collective selected: nothing would be measured, so a usage error on every
# rank (the rank count is known only at run time), not status 0 and no rows.
for case in "3 int8 allgather 1 2 3" "3 float alltoallv 4 8 12"; do
    set -- $case
    run "$1" -b "$4" -e "$5" -d "$2" -o "$3" -n 2
    expect_rc 2 "-b $4 -e $5 -d $2 -o $3 on $1 ranks"
    grep -qF -- "-b/-e: no size from $4 to $5 bytes gives each of the $1 ranks a whole element in any collective and type selected, so nothing would be measured; raise -e to at least $6" \
        "$CB_TMP/err" || show_and_fail "-o $3: no message naming the range and the ranks"
    has 0 '^ *[0-9]'
done
# One collective that fits is enough.
run 3 -b 1 -e 2 -d int8 -o allgather,allreduce -n 2
expect_rc 0 "-b 1 -e 2 -d int8 -o allgather,allreduce on 3 ranks"
has 1 '^ *2 .* int8 '
echo "ok"
