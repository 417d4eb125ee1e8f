# deploy/container/build.sh --check: the image's promises, checked on an
# installed prefix without building. The build fails when the installed
# program has no NCCL backend (unless --without-nccl) or make install left
# out nccl-tests' names (unless --disable-nccl-tests-names). Stand-in
# programs play the installed nccl-collbench; fast, no build.
. "$CB_SRCDIR/tests/support/lib.sh"
script="$CB_SRCDIR/deploy/container/build.sh"
names="all_reduce_perf all_gather_perf broadcast_perf reduce_perf reduce_scatter_perf
alltoall_perf alltoallv_perf gather_perf scatter_perf sendrecv_perf hypercube_perf"

# prefix DIR NCCL-LINE: a prefix whose nccl-collbench says NCCL-LINE of nccl.
prefix() {
    mkdir -p "$1/bin"
    cat >"$1/bin/nccl-collbench" <<STUB
#!/bin/sh
case \$1 in
--version) echo "nccl-collbench 0.1.0" ;;
--help) printf 'Backends:\n  nccl     %s\n  mpi      host buffers\n' "$2" ;;
esac
STUB
    chmod +x "$1/bin/nccl-collbench"
}
check() {
    rc=0
    sh "$script" --check "$@" >"$CB_TMP/out" 2>"$CB_TMP/err" || rc=$?
}

# No names: refused, naming them.
prefix "$CB_TMP/a" "GPU buffers and NCCL collectives"
check "$CB_TMP/a" --with-cuda --with-nccl
[ "$rc" = 1 ] && grep -q "left out nccl-tests' names: all_reduce_perf" "$CB_TMP/err" ||
    fail "no names: status $rc: $(cat "$CB_TMP/err")"
for name in $names; do ln -s nccl-collbench "$CB_TMP/a/bin/$name"; done
check "$CB_TMP/a" --with-cuda --with-nccl
[ "$rc" = 0 ] || fail "a whole prefix: status $rc: $(cat "$CB_TMP/err")"
check "$CB_TMP/a" --disable-nccl-tests-names
[ "$rc" = 0 ] || fail "--disable-nccl-tests-names with names: status $rc"

# No NCCL backend: refused, unless --without-nccl asked for none.
prefix "$CB_TMP/b" "not built: configure found no NCCL"
for name in $names; do ln -s nccl-collbench "$CB_TMP/b/bin/$name"; done
check "$CB_TMP/b" --with-cuda --with-nccl
[ "$rc" = 1 ] && grep -q 'has no NCCL backend' "$CB_TMP/err" ||
    fail "no NCCL backend: status $rc: $(cat "$CB_TMP/err")"
check "$CB_TMP/b" --without-nccl
[ "$rc" = 0 ] || fail "--without-nccl: status $rc: $(cat "$CB_TMP/err")"

# The recipe asks for both.
grep -q 'build.sh "$PREFIX" --with-cuda --with-nccl --enable-nccl-tests-names' \
    "$CB_SRCDIR/deploy/container/Containerfile" || fail "the Containerfile does not ask for NCCL and the names"
exit 0
