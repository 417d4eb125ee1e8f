# nccl-tests' program names are in every build unless configure was given
# --disable-nccl-tests-names: links to nccl-collbench in the build tree's
# src/ (made by make) and in bindir (make install's hook, which refuses to
# replace a file that is not a link). A second configure of the tree, in a
# temporary folder, runs only the install hooks: nothing is built.
. "$CB_SRCDIR/tests/support/lib.sh"
names="all_reduce_perf all_gather_perf broadcast_perf reduce_perf reduce_scatter_perf
alltoall_perf alltoallv_perf gather_perf scatter_perf sendrecv_perf hypercube_perf"
args=$("$CB_BUILDDIR/config.status" --config) || skip "no config.status in $CB_BUILDDIR"
case $args in
*disable-nccl-tests-names* | *enable-nccl-tests-names=no*)
    [ -e "$CB_BUILDDIR/src/all_reduce_perf" ] &&
        fail "configured with --disable-nccl-tests-names, yet src/all_reduce_perf is there"
    grep -q '^[^#].*refusing to replace' "$CB_BUILDDIR/Makefile" &&
        fail "configured with --disable-nccl-tests-names, yet make install has the hook" ;;
*)
    # The build tree: every name a link, and one that runs as nccl-tests'.
    for name in $names; do
        [ "$(readlink "$CB_BUILDDIR/src/$name")" = nccl-collbench ] ||
            fail "a default build has no src/$name linked to nccl-collbench"
    done
    "$CB_BUILDDIR/src/all_reduce_perf" --help | grep -q 'measuring allreduce' ||
        fail "src/all_reduce_perf --help is not all_reduce_perf's" ;;
esac
args=$(echo "$args" | sed "s/'--disable-nccl-tests-names'//; s/'--enable-nccl-tests-names[=a-z]*'//")
build=$CB_TMP/build
mkdir -p "$build"
# shellcheck disable=SC2086
(cd "$build" && eval "\"$CB_SRCDIR/configure\" $args --prefix=/opt/cb") \
    >"$CB_TMP/configure.log" 2>&1 ||
    { tail -5 "$CB_TMP/configure.log"; skip "a second configure of the tree failed here"; }
grep -q 'nccl-tests names: yes' "$CB_TMP/configure.log" ||
    fail "a default configure does not say 'nccl-tests names: yes'"
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
# --disable-nccl-tests-names: no links, no hook.
off=$CB_TMP/off
mkdir -p "$off"
(cd "$off" && eval "\"$CB_SRCDIR/configure\" $args --disable-nccl-tests-names") \
    >"$CB_TMP/configure.log" 2>&1 || fail "configure --disable-nccl-tests-names failed"
grep -q 'nccl-tests names: no' "$CB_TMP/configure.log" || fail "--disable: the summary does not say no"
grep -q '^[^#].*refusing to replace' "$off/Makefile" && fail "--disable: make install has the hook"
grep -q '^[^#].*LN_S.*src/' "$off/Makefile" && fail "--disable: make links the names in src/"
exit 0
