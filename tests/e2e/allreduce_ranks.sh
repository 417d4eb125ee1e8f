# A verified all-reduce sweep at 1, 2, 3 and 4 ranks: the table and the CSV
# are parsed and cross-checked (rows, counts, bandwidth arithmetic, footer).
. "$CB_SRCDIR/tests/support/lib.sh"
need_mpirun
need_python

sizes=8,32,128,512,2048,8192,32768,131072,524288
for np in 1 2 3 4; do
    run "$np" -o allreduce -b 8 -e 512K -f 4 -n 5 -c 1 --csv "$CB_TMP/np$np.csv"
    expect_rc 0 "allreduce sweep on $np ranks"
    check check-sweep --table "$CB_TMP/out" --csv "$CB_TMP/np$np.csv" --ranks "$np" --sizes "$sizes"
done

# With one rank nothing crosses a link: bus bandwidth is 0 by definition.
run 1 -b 1M -e 1M -n 2
expect_rc 0 "one rank"
awk '!/^#/ { if ($8 != "0.00" || $12 != "0.00") bad = 1 } END { exit bad }' "$CB_TMP/out" ||
    fail "busbw is not 0 with one rank"

# The sweep from the definition of done, 8 B to 64 MiB by factors of 2.
sizes=$(awk 'BEGIN { s = 8; out = s; while (s < 67108864) { s *= 2; out = out "," s }; print out }')
CB_RUN_TIMEOUT=300 run 4 -o allreduce -b 8 -e 64M -f 2 -c 1 --csv "$CB_TMP/big.csv"
expect_rc 0 "8 B to 64 MiB on 4 ranks"
check check-sweep --table "$CB_TMP/out" --csv "$CB_TMP/big.csv" --ranks 4 --sizes "$sizes"
echo "ok"
