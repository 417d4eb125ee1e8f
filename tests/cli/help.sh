# --help and --version: printed once by rank 0, on stdout, exit 0.
. "$CB_SRCDIR/tests/support/lib.sh"
need_mpirun

for np in 1 3; do
    run "$np" --help
    expect_rc 0 "--help on $np ranks"
    [ "$(grep -c '^Usage:' "$CB_TMP/out")" = 1 ] || fail "--help printed $(grep -c '^Usage:' "$CB_TMP/out") times on $np ranks"
    for opt in --op --minbytes --maxbytes --stepfactor --stepbytes --iters --warmup --check \
               --datatype --redop --root --average --blocking --backend --csv --help --version; do
        grep -q -- "$opt" "$CB_TMP/out" || fail "--help does not mention $opt"
    done
    for name in allreduce allgather reducescatter broadcast reduce alltoall gather scatter \
                sendrecv float half bfloat16 fp8_e4m3 fp8_e5m2 avg premulsum; do
        grep -qw "$name" "$CB_TMP/out" || fail "--help does not list $name"
    done
    grep -q 'mpi ' "$CB_TMP/out" || fail "--help does not list the backends"
    grep -q 'nccl-collbench' "$CB_TMP/err" && fail "--help wrote to stderr"

    run "$np" --version
    expect_rc 0 "--version on $np ranks"
    [ "$(wc -l <"$CB_TMP/out")" = 1 ] || fail "--version printed more than one line"
    grep -Eq '^nccl-collbench [0-9]+\.[0-9]+\.[0-9]+$' "$CB_TMP/out" || fail "--version: $(cat "$CB_TMP/out")"
done
echo "ok"
