# The CSV read by pandas with the column types nccl-collbench-output(5)
# gives (the nullable integer columns as Int64): every integer column is
# int64 or Int64, wrong is NA exactly where check_passes is 0 (barrier, -c 0).
# Skips (77) where pandas cannot be imported by python3, or by
# $CB_PANDAS_PYTHON when set (a venv with pandas: python3 -m venv DIR &&
# DIR/bin/pip install pandas). The csv module's check is csv_types.sh.
. "$CB_SRCDIR/tests/support/lib.sh"
need_mpirun
need_python

py=${CB_PANDAS_PYTHON:-$CB_PYTHON}
"$py" -c 'import pandas' 2>/dev/null ||
    skip "pandas cannot be imported by $py (set CB_PANDAS_PYTHON to a python3 that has it)"
run 2 --backend mpi -o allreduce,barrier,broadcast -d float,int32 -b 8 -e 1K -f 8 -n 2 \
    --csv "$CB_TMP/checked.csv"
expect_rc 0 "a checked sweep with barrier"
run 2 --backend mpi -o allreduce -b 8 -e 1K -f 8 -n 2 -c 0 --csv "$CB_TMP/unchecked.csv"
expect_rc 0 "-c 0"
"$py" "$CB_SRCDIR/tests/e2e/csv_types.py" --pandas "$CB_TMP/checked.csv" "$CB_TMP/unchecked.csv" ||
    fail "pandas' reading of the CSV"
echo "ok"
