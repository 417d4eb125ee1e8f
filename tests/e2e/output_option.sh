# --output NAME=PATH asks for any output format by its name: csv=F writes
# the CSV --csv F writes, json=F the document --json F writes, table=F
# moves the table; csv=- puts the CSV on stdout as --csv - does. Bad ones
# are usage errors (status 2, nothing measured): an unknown name (the
# message lists the formats), a value without NAME=PATH, '-' for a format
# that needs a file, a format asked for both ways, and one file for two
# outputs however asked for.
. "$CB_SRCDIR/tests/support/lib.sh"
need_mpirun
need_python

CB_RUN_TIMEOUT=60
d="$CB_TMP/outopt"
mkdir "$d"
sweep="-d double -b 16 -e 64 -f 4 -n 1"

# same_rows A B KIND: the two files hold the same rows (the measured times
# differ from run to run; what was measured and its check do not).
same_rows() {
    "$CB_PYTHON" - "$1" "$2" "$3" <<'PY' || fail "$3: --output's file differs from its option's"
import csv, json, sys
a, b, kind = sys.argv[1:]
if kind == "csv":
    ra, rb = (list(csv.reader(open(p, newline=""))) for p in (a, b))
    assert ra[0] == rb[0], "headers differ"
    key = [ra[0].index(c) for c in ("collective", "datatype", "redop", "bytes", "count",
                                    "placement", "wrong", "ranks")]
    ka, kb = ([[r[i] for i in key] for r in rows[1:]] for rows in (ra, rb))
else:
    da, db = json.load(open(a)), json.load(open(b))
    assert sorted(da) == sorted(db), "top-level keys differ"
    assert da["parameters"] == db["parameters"], "parameters differ"
    assert da["complete"] is True and db["complete"] is True
    fields = ("collective", "datatype", "redop", "bytes", "count", "in_place", "wrong")
    ka, kb = ([[r[f] for f in fields] for r in d["results"]] for d in (da, db))
assert ka and ka == kb, (ka, kb)
PY
}

for kind in csv json; do
    run 2 $sweep "--$kind" "$d/by_option.$kind"
    expect_rc 0 "--$kind"
    run 2 $sweep --output "$kind=$d/by_output.$kind"
    expect_rc 0 "--output $kind="
    [ -s "$d/by_output.$kind" ] || show_and_fail "--output $kind= wrote no file"
    same_rows "$d/by_option.$kind" "$d/by_output.$kind" "$kind"
done

# Several at once, the table among them: stdout is left empty.
run 2 $sweep --output "table=$d/table.txt" --output "tests-json=$d/tests.json"
expect_rc 0 "--output table= --output tests-json="
[ -s "$CB_TMP/out" ] && show_and_fail "--output table=FILE: the table still on stdout"
grep -q '^# Out of bounds values : 0 OK$' "$d/table.txt" || fail "--output table=FILE: no table in FILE"
"$CB_PYTHON" -c 'import json, sys; json.load(open(sys.argv[1]))' "$d/tests.json" ||
    fail "--output tests-json=FILE: not a JSON document"

# csv=-: the CSV alone on stdout, the table on stderr, as --csv -.
run 2 $sweep --output csv=-
expect_rc 0 "--output csv=-"
head -n 1 "$CB_TMP/out" | grep -q '^schema_version,' || show_and_fail "--output csv=-: no CSV on stdout"
grep -q '^#' "$CB_TMP/out" && show_and_fail "--output csv=-: table lines on stdout"
grep -q '^# Out of bounds values : 0 OK$' "$CB_TMP/err" || show_and_fail "--output csv=-: no table on stderr"

# refused WANT ARGS...: status 2, one message saying WANT, nothing measured.
refused() {
    want=$1
    shift
    run 2 $sweep "$@"
    expect_rc 2 "$*"
    grep -qF -- "$want" "$CB_TMP/err" || show_and_fail "$*: no message saying: $want"
    grep -q '^ *[0-9]' "$CB_TMP/out" && show_and_fail "$*: measured despite the refusal"
    return 0
}
refused "no output format is named 'yaml' (known: table, csv, prom, tests-json, json)" \
    --output "yaml=$d/x.yaml"
for bad in csv "=$d/x" csv=; do
    refused "'$bad' is not NAME=PATH" --output "$bad"
done
refused "'json=-': the JSON document goes to a file" --output json=-
refused "'csv=$d/b.csv': csv is given twice" --output "csv=$d/a.csv" --output "csv=$d/b.csv"
refused "more than 8 outputs" $(for i in 1 2 3 4 5 6 7 8 9; do echo --output "f$i=$d/f$i"; done)
refused "--csv $d/a.csv and --output csv=$d/b.csv both ask for the csv output" \
    --csv "$d/a.csv" --output "csv=$d/b.csv"
refused "--json $d/./same and --output csv=$d/same are the same file" \
    --output "csv=$d/same" --json "$d/./same"
refused "--csv $d/same and --output prom=$d/./same are the same file" \
    --csv "$d/same" --output "prom=$d/./same"
for f in a.csv b.csv x.yaml same; do
    [ ! -e "$d/$f" ] || fail "a refused run wrote $f"
done
echo "ok"
