# getopt_long's habits under nccl-tests' names and ours: a unique prefix of
# a long option is that option (--minb 8, --warmup_iter 3); an ambiguous
# one is refused with status 2 naming the candidates. -F FILE (a CSV file
# in some forks) is refused with a word of --csv; -c 0 ends with a verdict
# that says nothing was verified, never PASS. One rank, no launcher.
. "$CB_SRCDIR/tests/support/lib.sh"

links=$CB_TMP/bin
mkdir -p "$links"
ln -s "$CB_BIN" "$links/all_reduce_perf"
# go PROGRAM ARGS...: run once, rc, out and err as run leaves them.
go() {
    rc=0
    timeout -k 5 60 "$@" </dev/null >"$CB_TMP/out" 2>"$CB_TMP/err" || rc=$?
}

# Unique prefixes, of theirs and of ours, under both names.
go "$links/all_reduce_perf" --minb 8 --maxb 32 --stepf 2 --warmup_iter 3 --iter 2
expect_rc 0 "all_reduce_perf --minb 8 --maxb 32 --stepf 2 --warmup_iter 3 --iter 2"
[ "$(awk '/^ *[0-9]/ {print $1}' "$CB_TMP/out" | tr '\n' ' ')" = "8 16 32 " ] ||
    show_and_fail "--minb/--maxb/--stepf: not the sizes 8 16 32"
grep -Eq 'warmup( iters)?: *3 ' "$CB_TMP/out" || show_and_fail "--warmup_iter 3: not 3 warmups"
go "$CB_BIN" --minb 8 --maxb 8 --warmup_iter 3 --iter 2 -o allreduce
expect_rc 0 "nccl-collbench --minb 8 --warmup_iter 3"
has 1 '^ *8 '

# Ambiguous: refused, naming every candidate.
for prog in "$links/all_reduce_perf" "$CB_BIN"; do
    go "$prog" --m 8
    expect_rc 2 "$prog --m 8"
    grep -q 'ambiguous option' "$CB_TMP/err" || show_and_fail "$prog --m: not called ambiguous"
    for cand in --minbytes --maxbytes; do
        grep -q -- "$cand" "$CB_TMP/err" || show_and_fail "$prog --m: $cand not named"
    done
done

# -F file.csv: a word of --csv.
go "$links/all_reduce_perf" -F out.csv -b 8 -e 8
expect_rc 2 "all_reduce_perf -F out.csv"
grep -q -- '--csv out.csv' "$CB_TMP/err" || show_and_fail "-F out.csv: no word of --csv"

# -c 0: status 0 as nccl-tests', but the verdict is not PASS and says why.
go "$links/all_reduce_perf" -b 8 -e 8 -n 1 -w 0 -c 0
expect_rc 0 "all_reduce_perf -c 0"
grep '^# Result:' "$CB_TMP/out" | grep -q PASS && show_and_fail "-c 0 ends with PASS"
grep '^# Result:' "$CB_TMP/out" | grep -q 'nothing verified' ||
    show_and_fail "-c 0: the verdict does not say nothing was verified"
go "$links/all_reduce_perf" -b 8 -e 8 -n 1 -w 0 -c 1
grep -q '^# Result: PASS' "$CB_TMP/out" || show_and_fail "-c 1: not PASS"
exit 0
