# Bad command lines: every one exits 2 quickly with one message naming the
# bad value (plus the pointer to --help), nothing on stdout; on 1 rank, and
# a third of them on 4 ranks.
. "$CB_SRCDIR/tests/support/lib.sh"
need_mpirun

CB_RUN_TIMEOUT=20
# Each case: the text the message must contain, a tab, then the arguments.
cases=$(cat <<'CASES'
--bogus	--bogus
-q	-q
stray	stray
needs a value	-b
abc	-b abc
-5	-b -5
at least 1	-b 0
99999999999999999999	-e 99999999999999999999
20000000T	-e 20000000T
above	-b 1M -e 1K
'1'	-f 1
2.5	-f 2.5
not both	-f 2 -i 8
at least 1	-i 0
more than 4096 sizes	-b 1 -e 1M -i 1
'0'	-n 0
-4	-n -4
ten	-n ten
-1	-w -1
'x'	-c x
'4'	-a 4
median	-a median
'4'	-z 4
allredooce	-o allredooce
empty	-o allreduce,
twice	-o allreduce,allreduce
float16x	-d float16x
twice	-d float,float
mean	--redop mean
gloo	--backend gloo
empty	--csv=
written whole	--json -
empty	--json=
yes	--help=yes
1000000001	-n 1000000001
'-1'	-T -1
abc	-T abc
604801	-T 604801
'0'	-m 0
'-1'	-G -1
'2'	-C 2
99	-r 99
'x'	-r x
fp8_e6m3	-d fp8_e6m3
'1'	--stats=1
'all'	-o all,allreduce
empty	--redop sum,,max
rows	--layout rows
twice	--layout col,col
'col,'	--layout col,
stride:0	--hier-split stride:0
nodes	--hier-split nodes
one colour per rank	--hier-split color:0,1 -o hier_allreduce
'-1'	--stable -1
1001	--stable 1001
'2.5'	--stable 2.5
--redop sum	-o sum
--redop max	-o allreduce,max
mpirun -np N	-g 2
one GPU per rank	-t 4
'0'	-g 0
no size from 1 to 1 bytes holds a whole float element	-b 1 -e 1
from 1 to 3 bytes holds a whole float	-b 1 -e 3 -d double,float
did you mean --min-busbw?	--min-bw 3
--min-busbw 5: no collective selected moves data (barrier	-o barrier --min-busbw 5
--min-busbw 5: no collective selected moves data (comm_init	-o comm_init --min-busbw 5
--expect auto: no collective selected moves data (barrier	-o barrier --expect auto
--prom-sizes 100,200: no size of the sweep	--prom nothing.prom --prom-sizes 100,200 -b 1K -e 4K
did you mean --iters?	--itres 3
ambiguous option: could be --minbytes, --maxbytes	--m 8
did you mean allreduce?	-o allreduc
did you mean reduce_scatter?	-o reduce_scater
did you mean float?	-d flaot
did you mean bfloat16?	-d bfloat61
did you mean sum?	--redop summ
NCCL_CTA_POLICY	-x 1
0 to 1	-I 2
0 to 1	-S 2
give -I 1 too	-K 1
leaves none of the -n 5 samples	-I 1 -K 5 -n 5
CUDA graph	-I 1 -G 1
device_cta_count	-V 16
device_cta_count	--device_cta_count=16
expected 0 or 1	-M 2
expected 0 or 1	--memory=on
placement column	-O 1
host memory on --backend mpi	-Y fine
NCCL_ALGO and NCCL_PROTO	-A ring
device-API	-D 1
needs a value	-J
size 9223372036854775808 bytes needs more than 2^64-1	-b 8388608T -e 8388608T
size 9223372036854775808 bytes needs more than 2^64-1	-b 9223372036854775808 -e 9223372036854775808
-u 1048576 (double elements)	-e 18446744073709551615 -b 18446744073709551615 -u 1048576 -d double
size 4611686018427387904 bytes with --layout col	-b 4194304T -e 4194304T -o alltoall --layout col
size 18446744073709551614 bytes	-b 16 -e 18446744073709551615 -i 18446744073709551598
CASES
)
# Every case on 1 rank; every third on 4 ranks, where what is checked beyond
# the message (each rank ends with 2, one message in all) is the same path
# for every option: 70 more launches would only add minutes.
four_rank_cases=$(echo "$cases" | awk 'NR % 3 == 1')
for np in 1 4; do
    if [ "$np" = 4 ]; then these=$four_rank_cases; else these=$cases; fi
    echo "$these" | while IFS='	' read -r want args; do
        # shellcheck disable=SC2086
        run "$np" $args
        [ "$rc" = 124 ] && fail "'$args' on $np ranks did not finish within ${CB_RUN_TIMEOUT}s"
        expect_rc 2 "'$args' on $np ranks"
        [ -s "$CB_TMP/out" ] && fail "'$args' on $np ranks wrote to stdout"
        [ "$(grep -c '^nccl-collbench: ' "$CB_TMP/err")" = 1 ] || { cat "$CB_TMP/err"; fail "'$args' on $np ranks: not exactly one message"; }
        grep '^nccl-collbench: ' "$CB_TMP/err" | grep -qF -- "$want" || { cat "$CB_TMP/err"; fail "'$args': message does not mention '$want'"; }
        grep -q "Try 'nccl-collbench --help'" "$CB_TMP/err" || fail "'$args': no pointer to --help"
        if grep -qi 'core dumped\|segmentation' "$CB_TMP/err"; then fail "'$args' crashed"; fi
        echo "$args" >>"$CB_TMP/tried"
    done || exit 1
done
# Every case ran (a launcher reading stdin would cut the loop short).
expected=$(( $(echo "$cases" | wc -l) + $(echo "$four_rank_cases" | wc -l) ))
[ "$(wc -l <"$CB_TMP/tried")" = "$expected" ] ||
    fail "only $(wc -l <"$CB_TMP/tried") of $expected cases ran"

# nccl-tests' -g 1 -t 1 are accepted and change nothing.
run 2 -g 1 -t 1 -b 8 -e 8 -n 1
expect_rc 0 "-g 1 -t 1"
has 1 '^ *8 '
# And its other options where they mean what ours do: -J writes their
# JSON, -I 1 adds their per-iteration columns, -M 1 the memory report; -p,
# -S 0, -D 0, -y 0, -K 0 change nothing.
run 2 -J "$CB_TMP/j.json" -I 1 -p 1 -S 0 -D 0 -y 0 -K 0 -M 1 -b 8 -e 8 -n 1
expect_rc 0 "nccl-tests' -J, -I 1, -p 1, -S 0, -D 0, -y 0, -K 0, -M 1"
has 1 '^ *8 '
has 1 '^# Memory per rank'
grep -q '^# *size .* i_min *i_max *i_p99 *i_cv%' "$CB_TMP/out" || fail "-I 1: no i_min column"
[ -s "$CB_TMP/j.json" ] || fail "-J wrote no JSON document"
# A misspelt word far from any name gets no guess.
run 1 -o zzzzzz
expect_rc 2 "-o zzzzzz"
grep -q 'did you mean' "$CB_TMP/err" && fail "-o zzzzzz: a guess for a word near no name"

# An output file that cannot be written is an error before any measurement.
for np in 1 4; do
    run "$np" --csv "$CB_TMP/no/such/dir/out.csv" -b 8 -e 8
    expect_rc 1 "unwritable --csv on $np ranks"
    grep -q '^nccl-collbench: .*--csv: cannot create .*no/such/dir/out.csv' "$CB_TMP/err" || { cat "$CB_TMP/err"; fail "no message naming the CSV path"; }
    grep -q '^ *[0-9]' "$CB_TMP/out" && fail "measured despite an unwritable CSV file"
done
echo "ok"
