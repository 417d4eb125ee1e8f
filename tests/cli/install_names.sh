# configure --enable-nccl-tests-names: make install links nccl-tests' ten
# program names to nccl-collbench (and refuses to replace a file that is
# not a link); without it there is no such step. A second configure of the
# tree, in a temporary folder, runs only the install hooks: nothing is built.
. "$CB_SRCDIR/tests/support/lib.sh"
names="all_reduce_perf all_gather_perf broadcast_perf reduce_perf reduce_scatter_perf
alltoall_perf alltoallv_perf gather_perf scatter_perf sendrecv_perf"
args=$("$CB_BUILDDIR/config.status" --config) || skip "no config.status in $CB_BUILDDIR"
case $args in
*enable-nccl-tests-names*) ;;
*) grep -q '^[^#].*refusing to replace' "$CB_BUILDDIR/Makefile" &&
    fail "configured without --enable-nccl-tests-names, yet make install has the hook" ;;
esac
build=$CB_TMP/build
mkdir -p "$build"
# shellcheck disable=SC2086
(cd "$build" && eval "\"$CB_SRCDIR/configure\" $args --enable-nccl-tests-names --prefix=/opt/cb") \
    >"$CB_TMP/configure.log" 2>&1 ||
    { tail -5 "$CB_TMP/configure.log"; skip "a second configure of the tree failed here"; }
grep -q 'nccl-tests names: yes' "$CB_TMP/configure.log" || fail "the summary does not say yes"
dest=$CB_TMP/dest
make -s -C "$build" install-exec-hook DESTDIR="$dest" >"$CB_TMP/hook.log" 2>&1 ||
    { cat "$CB_TMP/hook.log"; fail "install-exec-hook failed"; }
for name in $names; do
    [ "$(readlink "$dest/opt/cb/bin/$name")" = nccl-collbench ] ||
        fail "$name is not a link to nccl-collbench"
done
# Again over its own links: fine. Over a real program: refused, left as is.
make -s -C "$build" install-exec-hook DESTDIR="$dest" >/dev/null 2>&1 || fail "reinstall failed"
rm "$dest/opt/cb/bin/gather_perf"
echo real >"$dest/opt/cb/bin/gather_perf"
make -s -C "$build" install-exec-hook DESTDIR="$dest" >"$CB_TMP/hook.log" 2>&1 &&
    fail "the hook replaced a file that is not a link"
grep -q 'refusing to replace .*gather_perf' "$CB_TMP/hook.log" || fail "no message naming it"
[ "$(cat "$dest/opt/cb/bin/gather_perf")" = real ] || fail "the real gather_perf was changed"
# Uninstall removes the links, never the real program.
make -s -C "$build" uninstall-hook DESTDIR="$dest" >/dev/null 2>&1 || fail "uninstall-hook failed"
for name in $names; do
    [ -h "$dest/opt/cb/bin/$name" ] && fail "$name left after uninstall"
done
[ "$(cat "$dest/opt/cb/bin/gather_perf")" = real ] || fail "uninstall removed the real gather_perf"
exit 0
