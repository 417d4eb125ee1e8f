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
    sed -n -e 's/^ *mpirun -np [0-9]* nccl-collbench //p' -e 's/^ *nccl-collbench //p' \
    >"$CB_TMP/recipes"
[ "$(wc -l <"$CB_TMP/recipes")" -ge 3 ] || fail "found $(wc -l <"$CB_TMP/recipes") recipes of nccl-collbench"
while read -r args; do
    # shellcheck disable=SC2086 # the recipe's words
    run 1 $args --help
    expect_rc 0 "the recipe '$args' (with --help after it)"
done <"$CB_TMP/recipes"

# What --help says is so: the nccl backend's default clock is the host's;
# the Kubernetes recipe runs as deploy/ does (-g 8, no mpirun).
grep -q 'timed with CUDA events' "$CB_TMP/help" && fail "--help says the nccl backend is timed with CUDA events"
k8s=$(sed -n '/^  Kubernetes/,/^  [A-Z]/p' "$CB_TMP/help")
echo "$k8s" | grep -q 'mpirun -np' && fail "the Kubernetes recipe uses mpirun: $k8s"
echo "$k8s" | grep -q 'nccl-collbench -g 8 ' || fail "the Kubernetes recipe has no -g 8: $k8s"
grep -A1 -- '- -g$' "$CB_SRCDIR/deploy/kubernetes/indexed-job.yaml" | grep -q '"8"' ||
    fail "deploy/kubernetes/indexed-job.yaml no longer runs -g 8: change the recipe with it"
# The man page's Kubernetes recipe too.
man_k8s=$(sed -n '/^Kubernetes/,/^\.RE/p' "$CB_BUILDDIR/man/nccl-collbench.1")
echo "$man_k8s" | grep -q 'mpirun \\-np' && fail "nccl-collbench(1)'s Kubernetes recipe uses mpirun"
echo "$man_k8s" | grep -q 'nccl\\-collbench \\-g 8 ' || fail "nccl-collbench(1)'s Kubernetes recipe has no -g 8"
# Under nccl-tests' names, -g is not "1 only": -g 8 starts 8 ranks.
ln -s "$CB_BIN" "$CB_TMP/all_reduce_perf"
"$CB_TMP/all_reduce_perf" --help >"$CB_TMP/their_help" 2>&1 || fail "all_reduce_perf --help failed"
grep -- '--ngpus' "$CB_TMP/their_help" | grep -q '1 only' && fail "all_reduce_perf --help: -g is '1 only'"

# --help and --version answer without MPI_Init: with an MPI_Init that ends
# the process (status 42), they still print and exit 0.
# Not in a sanitizer build: its runtime refuses a library preloaded ahead
# of it, and the plain build checks the same code.
if command -v "${CC:-cc}" >/dev/null 2>&1 && ! ldd "$CB_BIN" 2>/dev/null | grep -q libasan; then
    cat >"$CB_TMP/noinit.c" <<'SHIM'
#include <unistd.h>
int MPI_Init(int *argc, char ***argv) { (void)argc; (void)argv; _exit(42); }
int MPI_Init_thread(int *argc, char ***argv, int want, int *got)
{ (void)argc; (void)argv; (void)want; (void)got; _exit(42); }
SHIM
    "${CC:-cc}" -shared -fPIC -o "$CB_TMP/noinit.so" "$CB_TMP/noinit.c" ||
        fail "cannot build the MPI_Init shim"
    for args in --help --version; do
        for prog in "$CB_BIN" "$CB_TMP/all_reduce_perf"; do
            rc=0
            LD_PRELOAD="$CB_TMP/noinit.so" "$prog" $args >"$CB_TMP/out" 2>&1 || rc=$?
            [ "$rc" = 0 ] || fail "$prog $args started MPI (status $rc)"
            [ -s "$CB_TMP/out" ] || fail "$prog $args printed nothing"
        done
    done
    # The shim does end a run that needs MPI, so the check above means something.
    rc=0
    LD_PRELOAD="$CB_TMP/noinit.so" "$CB_BIN" -e 8 -n 1 >/dev/null 2>&1 || rc=$?
    [ "$rc" = 42 ] || fail "the MPI_Init shim did not take (status $rc)"
fi
echo "ok"
