# Every datatype and reduction built, verified at 1 to 4 ranks, several
# passes; the time-combining modes, blocking mode and additive steps.
. "$CB_SRCDIR/tests/support/lib.sh"
need_mpirun
need_python

dtypes=int8,uint8,int32,uint32,int64,uint64,float,double,half,bfloat16,fp8_e4m3,fp8_e5m2
redops=sum,prod,min,max,avg,premulsum
for np in 1 2 3 4; do
    run "$np" -d all --redop all -b 8 -e 4K -f 8 -n 2 -w 1 -c 2 --csv "$CB_TMP/all.csv"
    expect_rc 0 "all types and reductions on $np ranks"
    check check-sweep --table "$CB_TMP/out" --csv "$CB_TMP/all.csv" --ranks "$np" \
        --sizes 8,64,512,4096 --dtypes "$dtypes" --redops "$redops" --passes 2
done

# Sizes that are not multiples of the element size round down to whole
# elements (the size column shows the bytes moved); a size below one element
# is skipped with a note, not run.
run 3 -d double,int8 -b 4 -e 20 -i 5 -n 2 --csv "$CB_TMP/odd.csv"
expect_rc 0 "odd sizes"
check check-sweep --table "$CB_TMP/out" --csv "$CB_TMP/odd.csv" --ranks 3 --sizes 4,9,14,19 \
    --dtypes double,int8
grep -q '^# skipped allreduce double sum 4 B: too small to give every rank a whole element' "$CB_TMP/out" ||
    fail "no note for the skipped size"

for mode in 0 1 2 3 rank0 mean min max; do
    run 2 -a "$mode" -b 1K -e 4K -n 3 --csv "$CB_TMP/a.csv"
    expect_rc 0 "-a $mode"
    check check-sweep --table "$CB_TMP/out" --csv "$CB_TMP/a.csv" --ranks 2 --sizes 1024,2048,4096
done
grep -q ',max,' "$CB_TMP/a.csv" || fail "time_combine column does not say max"

run 2 -z 1 -b 1K -e 4K -n 3
expect_rc 0 "-z 1"
grep -q 'blocking: 1' "$CB_TMP/out" || fail "preamble does not show blocking mode"

# Checking off: #wrong is N/A and the CSV leaves wrong empty.
run 2 -c 0 -b 1K -e 1K -n 2 --csv "$CB_TMP/c0.csv"
expect_rc 0 "-c 0"
check check-sweep --table "$CB_TMP/out" --csv "$CB_TMP/c0.csv" --ranks 2 --sizes 1024 --passes 0 --wrong any
grep -q 'N/A' "$CB_TMP/out" || fail "-c 0 does not show N/A"
echo "ok"
