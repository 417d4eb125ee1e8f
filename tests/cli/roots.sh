# -r: the default root 0, one given root, every root in turn (all or -1);
# rootless collectives always show -1; a root that is not a rank of the run
# is a usage error on every rank (status 2) naming the root and rank count.
. "$CB_SRCDIR/tests/support/lib.sh"
need_mpirun
need_python

colls=allreduce,broadcast,reduce,gather,scatter,sendrecv
run 3 -o "$colls" -d int32 -b 48 -e 192 -f 4 -n 1 --csv "$CB_TMP/r.csv"
expect_rc 0 "default root"
check check-sweep --table "$CB_TMP/out" --csv "$CB_TMP/r.csv" --ranks 3 --sizes 48,192 \
    --collective "$colls" --dtypes int32 --roots 0

run 3 -o "$colls" -d int32 -b 48 -e 192 -f 4 -n 1 -r 2 --csv "$CB_TMP/r.csv"
expect_rc 0 "-r 2"
check check-sweep --table "$CB_TMP/out" --csv "$CB_TMP/r.csv" --ranks 3 --sizes 48,192 \
    --collective "$colls" --dtypes int32 --roots 2

for every in all ALL -1; do
    run 4 -o "$colls" -d float --redop sum,max -b 64 -e 64 -n 1 -r "$every" --csv "$CB_TMP/r.csv"
    expect_rc 0 "-r $every"
    check check-sweep --table "$CB_TMP/out" --csv "$CB_TMP/r.csv" --ranks 4 --sizes 64 \
        --collective "$colls" --dtypes float --redops sum,max --roots all
done

# Out of range for this run: exit 2 on every rank, one message, no output.
CB_RUN_TIMEOUT=20
for case in "1 1" "3 3" "3 7" "4 4"; do
    set -- $case
    run "$1" -o broadcast -r "$2" -b 8 -e 8
    expect_rc 2 "-r $2 on $1 ranks"
    [ -s "$CB_TMP/out" ] && fail "-r $2 on $1 ranks wrote to stdout"
    [ "$(grep -c '^nccl-collbench: ' "$CB_TMP/err")" = 1 ] || { cat "$CB_TMP/err"; fail "-r $2 on $1 ranks: not exactly one message"; }
    ranks="$1 ranks"
    [ "$1" = 1 ] && ranks="1 rank"
    grep '^nccl-collbench: ' "$CB_TMP/err" | grep -q "root $2 .*with $ranks" ||
        { cat "$CB_TMP/err"; fail "-r $2 on $1 ranks: the message does not name $2 and $ranks"; }
done
# Not a rank at all: the same status, whatever the rank count.
for bad in -2 x 1.5 ""; do
    run 2 -r "$bad" -b 8 -e 8
    expect_rc 2 "-r '$bad'"
    grep -q "^nccl-collbench: -r: " "$CB_TMP/err" || { cat "$CB_TMP/err"; fail "-r '$bad': no message about -r"; }
done
echo "ok"
