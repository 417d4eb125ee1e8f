# --help and --version: printed once by rank 0, on stdout, exit 0; --help
# in its sections, no line over 80 columns, with recipes that parse.
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
    wide=$(awk 'length > 80 { printf "%d: %s\n", length, $0 }' "$CB_TMP/out")
    [ -z "$wide" ] || fail "--help has lines over 80 columns:
$wide"
    for section in 'Collectives and sizes' Timing Verification Outputs 'Runs and safety' \
                   Backends 'nccl-tests compatibility' 'Exit statuses'; do
        grep -qx "$section:" "$CB_TMP/out" || fail "--help lacks the section '$section:'"
    done
    for recipe in 'Node acceptance' 'Nightly regression' 'Slurm prolog' Kubernetes; do
        grep -q "^  $recipe" "$CB_TMP/out" || fail "--help lacks the recipe '$recipe'"
    done

    cp "$CB_TMP/out" "$CB_TMP/help"

    run "$np" --version
    expect_rc 0 "--version on $np ranks"
    [ "$(wc -l <"$CB_TMP/out")" = 1 ] || fail "--version printed more than one line"
    grep -Eq '^nccl-collbench [0-9]+\.[0-9]+\.[0-9]+$' "$CB_TMP/out" || fail "--version: $(cat "$CB_TMP/out")"
done
# Each recipe's command line parses: with --help after it, a recipe whose
# options were wrong would end with status 2 instead of printing the help.
sed -n '/^Recipes/,/^$/p' "$CB_TMP/help" | sed -e ':a' -e '/\\$/N; s/\\\n *//; ta' |
    sed -n 's/^ *mpirun -np [0-9]* nccl-collbench //p' >"$CB_TMP/recipes"
[ "$(wc -l <"$CB_TMP/recipes")" -ge 3 ] || fail "found $(wc -l <"$CB_TMP/recipes") recipes of nccl-collbench"
while read -r args; do
    # shellcheck disable=SC2086 # the recipe's words
    run 1 $args --help
    expect_rc 0 "the recipe '$args' (with --help after it)"
done <"$CB_TMP/recipes"
echo "ok"
