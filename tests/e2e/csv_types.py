"""The CSV's column types as nccl-collbench-output(5) gives them, for
csv_types.sh (the csv module) and csv_pandas.sh (pandas, with --pandas)."""
import csv
import re
import sys

# Integers in every row.
INTEGERS = ["schema_version", "ranks", "nodes", "ranks_per_node", "root", "bytes", "count",
            "warmup_iters", "iters", "check_passes", "agg", "graph_launches", "blocking",
            "iter_samples", "slowest_rank", "group_ranks", "cycle", "unalign"]
# An integer or empty: pandas' nullable Int64, as the man page says to read them.
NULLABLE = ["wrong", "group", "matrix_rows", "matrix_cols", "round"]
NUMBER = re.compile(r"-?[0-9]+")


def check_csv(path):
    rows = list(csv.DictReader(open(path, newline="")))
    assert rows, path
    for r in rows:
        for c in INTEGERS:
            assert NUMBER.fullmatch(r[c]), (c, r[c], r)
        for c in NULLABLE:
            assert r[c] == "" or NUMBER.fullmatch(r[c]), (c, r[c], r)
        assert (r["wrong"] == "") == (r["check_passes"] == "0"), r
    return rows


def check_pandas(path, rows):
    import pandas as pd
    dtypes = {c: "Int64" for c in NULLABLE}
    frame = pd.read_csv(path, dtype=dtypes)
    for c in NULLABLE:
        assert str(frame[c].dtype) == "Int64", (c, frame[c].dtype)
    for c in INTEGERS:
        assert str(frame[c].dtype) == "int64", (c, frame[c].dtype)
    # NA exactly where not checked; the counts as the csv module reads them.
    unchecked = [r["check_passes"] == "0" for r in rows]
    assert list(frame["wrong"].isna()) == unchecked, (list(frame["wrong"]), unchecked)
    assert [int(x) for x in frame["wrong"].dropna()] == \
        [int(r["wrong"]) for r in rows if r["wrong"] != ""]
    # Without the declaration an empty cell makes the column float: the
    # reason the man page gives it.
    if any(unchecked) and not all(unchecked):
        assert str(pd.read_csv(path)["wrong"].dtype) == "float64"


def main(argv):
    with_pandas = argv[1] == "--pandas"
    for path in argv[2:] if with_pandas else argv[1:]:
        rows = check_csv(path)
        if with_pandas:
            check_pandas(path, rows)
        print("%s: %d rows, types as documented%s" % (path, len(rows),
                                                      " (pandas too)" if with_pandas else ""))


if __name__ == "__main__":
    main(sys.argv)
