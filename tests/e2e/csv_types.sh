# The CSV's column types, read with Python's csv module (always run; the
# pandas reading is tests/e2e/csv_pandas.sh): the integer columns hold
# integers in every row; the nullable integer columns (wrong, group,
# matrix_rows, matrix_cols, round) hold an integer or nothing, and wrong is
# empty exactly where check_passes is 0 (barrier, which moves no data, and
# -c 0), so that a reader declaring them nullable integers (pandas' Int64,
# nccl-collbench-output(5)) never meets anything else.
. "$CB_SRCDIR/tests/support/lib.sh"
need_mpirun
need_python

run 2 --backend mpi -o allreduce,barrier,broadcast -d float,int32 -b 8 -e 1K -f 8 -n 2 \
    --csv "$CB_TMP/checked.csv"
expect_rc 0 "a checked sweep with barrier"
run 2 --backend mpi -o allreduce -b 8 -e 1K -f 8 -n 2 -c 0 --csv "$CB_TMP/unchecked.csv"
expect_rc 0 "-c 0"
"$CB_PYTHON" "$CB_SRCDIR/tests/e2e/csv_types.py" "$CB_TMP/checked.csv" "$CB_TMP/unchecked.csv" ||
    fail "the CSV's column types"
echo "ok"
