# Every two file outputs of the printer table (--csv, --json, --prom, -J)
# given one file, however spelled, are a usage error (status 2) whose one
# message names both, in the order of their option names, and nothing is
# written. main.c finds the pairs by walking the printer table: a format
# left out of the walk fails here.
. "$CB_SRCDIR/tests/support/lib.sh"
need_mpirun

CB_RUN_TIMEOUT=30
d="$CB_TMP/clash"
mkdir "$d"
set -- --csv --json --prom -J
for a in "$@"; do
    for b in "$@"; do
        [ "$a" = "$b" ] && continue
        run 1 --backend mpi -b 8 -e 8 -n 1 "$a" "$d/same" "$b" "$d/./same"
        expect_rc 2 "$a and $b on one file"
        # Named in the order of the option names, whichever came first.
        first="$a $d/same" second="$b $d/./same"
        if [ "$(printf '%s\n%s\n' "$a" "$b" | LC_ALL=C sort | head -n 1)" != "$a" ]; then
            first="$b $d/./same" second="$a $d/same"
        fi
        grep -qF -- "$first and $second are the same file" "$CB_TMP/err" ||
            show_and_fail "$a and $b: no message naming both"
        [ ! -e "$d/same" ] || fail "$a and $b: a refused run wrote the file"
    done
done
echo "ok"
