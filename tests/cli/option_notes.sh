# Options that would do nothing say so: -r without a rooted collective and
# --stable without --budget get a note in the preamble; a size range in
# which no selected type has a whole element is a usage error (bad_input.sh)
# unless only collectives that move no data are selected.
. "$CB_SRCDIR/tests/support/lib.sh"
need_mpirun

run 2 -r 1 -b 8 -e 8 -n 2 --stable 3
expect_rc 0 "-r 1 with allreduce, --stable without --budget"
has 1 '^# -r has no effect: no collective selected has a root'
has 1 '^# --stable has no effect without --budget'
has 1 '^ *8 '

# Where they act, no note.
run 2 -r 1 -b 8 -e 8 -n 2 -o allreduce,broadcast --budget 5 --stable 3
expect_rc 0 "-r 1 with broadcast, --stable with --budget"
has 0 'has no effect'

# A type too large for the range, beside one that fits: the one that fits
# is measured, the other noted as skipped.
run 2 -b 1 -e 1 -d int8,float -n 2
expect_rc 0 "-b 1 -e 1 -d int8,float"
has 1 '^ *1 .* int8 '
has 1 'skipped allreduce float sum 1 B'

# A collective that moves no data needs no size.
run 2 -b 1 -e 1 -o barrier -n 2
expect_rc 0 "-b 1 -e 1 -o barrier"
echo "ok"
