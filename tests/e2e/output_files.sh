# --csv, --json and --prom do no harm: a symlink, directory, device or read-only file
# is refused (status 1, one message naming it, nothing measured) and left as
# it was; two outputs in one file are a usage error (status 2); a full disk
# leaves whole CSV rows and a message naming the file and the error; no
# temporary file is left; an existing file is replaced with its permissions;
# a JSON document that a full disk cuts short names the file and the error
# and leaves the earlier file; a second run writing a CSV or JSON file that
# a run is writing at that moment is refused (status 1, naming it) and the
# first run's files are whole.
. "$CB_SRCDIR/tests/support/lib.sh"
need_mpirun
need_python

CB_RUN_TIMEOUT=30
d="$CB_TMP/files"
mkdir "$d" "$d/dir"
echo kept >"$d/target"
ln -s target "$d/link"
echo kept >"$d/readonly"
chmod 444 "$d/readonly"

# refused WANT ARGS...: status 1 before any measurement, one message saying WANT.
refused() {
    want=$1
    shift
    run 2 -b 8 -e 8 -n 1 "$@"
    expect_rc 1 "$*"
    grep '^nccl-collbench: ' "$CB_TMP/err" | grep -qF -- "$want" || show_and_fail "$*: no message saying: $want"
    grep -q '^ *[0-9]' "$CB_TMP/out" && show_and_fail "$*: measured despite the refusal"
    return 0
}
for opt in --csv --json --prom; do
    refused "$opt: refusing to replace '$d/link': it is a symbolic link" $opt "$d/link"
    [ -L "$d/link" ] && [ "$(cat "$d/target")" = kept ] || fail "$opt replaced the symlink or its target"
    refused "$opt: refusing to replace '$d/readonly': it is not writable" $opt "$d/readonly"
    [ "$(cat "$d/readonly")" = kept ] || fail "$opt replaced a read-only file"
    refused "$opt: refusing to replace '$d/dir': it is a directory" $opt "$d/dir"
    refused "$opt: refusing to replace '/dev/null': it is not a regular file" $opt /dev/null
    [ -c /dev/null ] || fail "$opt replaced /dev/null"
    refused "$opt: refusing to replace '/dev/full': it is not a regular file" $opt /dev/full
    [ -c /dev/full ] || fail "$opt replaced /dev/full"
    refused "$opt: cannot create '$d/no/such/x': its directory '$d/no/such' is not writable" $opt "$d/no/such/x"
done
if [ "$(id -u)" != 0 ]; then
    mkdir "$d/locked"
    chmod 555 "$d/locked"
    refused "--json: cannot create '$d/locked/x.json': its directory" --json "$d/locked/x.json"
else
    echo "(as root every directory is writable: the locked-directory case is not run)"
fi

# The same file twice, however spelled: a usage error.
echo old >"$d/one"
ln "$d/one" "$d/hard"
for pair in "$d/new.out $d/./new.out" "$d/one $d/hard" "$d/one $d/dir/../one"; do
    set -- $pair
    run 2 -b 8 -e 8 -n 1 --csv "$1" --json "$2"
    expect_rc 2 "--csv $1 --json $2"
    grep -qF -- "--csv $1 and --json $2 are the same file" "$CB_TMP/err" || show_and_fail "no message naming both"
done
[ "$(cat "$d/one")" = old ] && [ ! -e "$d/new.out" ] || fail "a refused pair of outputs touched a file"
# CSV on stdout is no file: a JSON file named '-' beside it is fine.
here=$(pwd)
cd "$d" || fail "cannot enter $d"
run 2 -b 8 -e 8 -n 1 --csv - --json ./-
cd "$here" || fail "cannot return to $here"
expect_rc 0 "--csv - --json ./-"
"$CB_PYTHON" -c 'import json, sys; json.load(open(sys.argv[1]))' "$d/-" || fail "no JSON in the file named -"

# A good run replaces existing files, keeps their permissions, leaves no temporary file.
echo old >"$d/r.csv"
echo old >"$d/r.json"
chmod 640 "$d/r.csv"
run 2 -b 8 -e 64 -n 1 --csv "$d/r.csv" --json "$d/r.json"
expect_rc 0 "--csv and --json on existing files"
check check-csv-header --csv "$d/r.csv"
"$CB_PYTHON" -c 'import json, sys; json.load(open(sys.argv[1]))' "$d/r.json" || fail "the JSON is not valid"
[ "$(stat -c %a "$d/r.csv")" = 640 ] || fail "the CSV lost its permissions: $(stat -c %a "$d/r.csv")"
ls "$d" | grep -q tmp && fail "a temporary file was left: $(ls "$d")"

# A full disk (a file size limit, the same error at the file's end): whole
# rows only, and a message naming the file and the error.
# MPICH keeps its shared memory (its own and UCX's) in files, which the same
# limit caps: MPI_Init fails, or the ranks die of SIGBUS, before any row.
if [ "$CB_LAUNCHER" = hydra ]; then
    echo "ok (under MPICH a file size limit stops MPI itself: that case is not run)"
    exit 0
fi
cat >"$CB_TMP/limited.sh" <<LAUNCHER
#!/bin/sh
trap '' XFSZ
ulimit -f 4
exec "$CB_BIN" "\$@"
LAUNCHER
chmod +x "$CB_TMP/limited.sh"
CB_RUN_BIN="$CB_TMP/limited.sh" run 2 -b 8 -e 64K -n 1 --csv "$d/full.csv"
expect_rc 1 "a CSV file that outgrows the limit"
grep -qF "writing the CSV file '$d/full.csv' failed: File too large" "$CB_TMP/err" || show_and_fail "no message naming the file and the error"
"$CB_PYTHON" - "$d/full.csv" <<'PY' || fail "the CSV is not whole rows"
import csv, sys
text = open(sys.argv[1], newline="").read()
assert text.endswith("\n"), "a partial last row"
rows = list(csv.reader(text.splitlines()))
assert len(rows) >= 2, rows
assert len({len(r) for r in rows}) == 1, "rows of different lengths"
PY
# The JSON document too: a message naming the file and the error, and the
# earlier file left as it was (the document is written beside it).
echo earlier >"$d/full.json"
CB_RUN_BIN="$CB_TMP/limited.sh" run 2 -b 8 -e 64K -n 1 --json "$d/full.json"
expect_rc 1 "a JSON document that outgrows the limit"
grep -qF "writing the JSON file '$d/full.json' failed: File too large" "$CB_TMP/err" ||
    show_and_fail "no message naming the JSON file and the error"
[ "$(cat "$d/full.json")" = earlier ] || fail "a JSON document that could not be written replaced the file"
ls -a "$d" | grep -q tmp && fail "a temporary file was left: $(ls -a "$d")"

# Two runs writing the same files at once: the first (in the background,
# cycling until stopped, -N 0, so that it outlasts the second whatever the
# machine's load) writes b.csv and b.json, which exists from an earlier run;
# a second asking for b.csv or b.json (either spelling) is refused with a
# message naming the file, and nothing of the first run's is harmed:
# stopped by SIGTERM, it leaves whole files (a JSON target that does not
# exist yet: tests/unit/unit_outfile.c).
echo earlier >"$d/b.json"
$CB_MPIRUN -np 2 "$CB_BIN" -b 8 -e 64K -f 2 -n 5 -d float,int8 -o allreduce,allgather -N 0 \
    --csv "$d/b.csv" --json "$d/b.json" </dev/null >"$CB_TMP/first.out" 2>"$CB_TMP/first.err" &
first=$!
wait_rows "$d/b.csv" 3 60 || { kill -KILL $first; fail "the first run wrote no rows within 60 s"; }
for second in "--csv $d/b.csv" "--json $d/b.json" "--csv $d/./b.csv" "--json $d/dir/../b.json"; do
    run 1 -b 8 -e 8 -n 1 $second
    kill -0 $first 2>/dev/null || { cat "$CB_TMP/first.err" >&2; fail "the first run ended"; }
    expect_rc 1 "a second run with $second"
    file=${second#* }
    grep -qF "'$file' is being written by another run" "$CB_TMP/err" ||
        show_and_fail "a second run with $second: no message naming the file"
done
kill -TERM $first
rc=0
i=0
while kill -0 $first 2>/dev/null; do
    i=$((i + 1))
    [ $i -le 300 ] || { kill -KILL $first; fail "the first run did not end within 30 s of SIGTERM"; }
    sleep 0.1
done
wait $first || rc=$?
[ "$rc" != 0 ] || fail "the first run: status 0 after SIGTERM"
# The CSV's rows are whole; the JSON is the run's, whole, or (where the
# launcher's SIGKILL came first: Open MPI 5's) the earlier file untouched,
# never a part of either.
"$CB_PYTHON" - "$d/b.csv" "$d/b.json" <<'PY' || fail "the first run's files are not whole"
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) > 3 and all(None not in r and None not in r.values() for r in rows), len(rows)
text = open(sys.argv[2]).read()
if text != "earlier\n":
    assert json.loads(text)["complete"] is False, "the JSON says the run ended normally"
PY
# Once it has ended, the files are free.
run 1 -b 8 -e 8 -n 1 --csv "$d/b.csv" --json "$d/b.json"
expect_rc 0 "a run after the first ended"
# The Prometheus file the same way: written whole beside it, or not at all.
echo earlier >"$d/full.prom"
CB_RUN_BIN="$CB_TMP/limited.sh" run 2 -b 8 -e 64K -n 1 -d float,double --prom "$d/full.prom"
expect_rc 1 "a Prometheus file that outgrows the limit"
grep -qF "writing '$d/full.prom' failed: File too large" "$CB_TMP/err" ||
    show_and_fail "no message naming the Prometheus file and the error"
[ "$(cat "$d/full.prom")" = earlier ] || fail "a Prometheus file that could not be written replaced the file"
ls -a "$d" | grep -q tmp && fail "a temporary file was left: $(ls -a "$d")"
echo "ok"
