# deploy/container/build.sh, the container recipe's build steps, run here
# as the Containerfile runs them: from the release tree (make distdir, so
# the tarball must carry the script), autogen, configure with this build's
# MPI (and its CUDA and NCCL, as the recipe's --with-cuda --with-nccl),
# make, make install into a temporary prefix and the smoke test. The
# installed program must run (--version) and, where NCCL was given, link it.
# Its usage errors: no prefix, a relative one, a source configured in place.
. "$CB_SRCDIR/tests/support/lib.sh"
. "$CB_SRCDIR/tests/support/dist.sh"
for tool in autoreconf automake make; do
    command -v "$tool" >/dev/null 2>&1 || skip "no $tool here: build.sh runs autogen and make"
done
mpicc=$(sed -n 's/^MPICC = //p' "$CB_BUILDDIR/Makefile")
[ -n "$mpicc" ] && [ -x "$mpicc" ] || skip "no mpicc recorded in $CB_BUILDDIR/Makefile"
version=$(sed -n 's/^PACKAGE_VERSION = //p' "$CB_BUILDDIR/Makefile")

mkdir "$CB_TMP/made"
make_tarball "$CB_TMP/made"
mkdir "$CB_TMP/stage"
(cd "$CB_TMP/stage" && tar xzf "$tarball") || fail "unpacking $tarball"
src="$CB_TMP/stage/$dist_name"
script="$src/deploy/container/build.sh"
[ -f "$script" ] || fail "the release tree has no deploy/container/build.sh"

# Usage errors, before any building.
rc=0
sh "$script" >"$CB_TMP/out" 2>"$CB_TMP/err" || rc=$?
[ "$rc" = 2 ] && grep -q 'usage: deploy/container/build.sh \[--check\] PREFIX' "$CB_TMP/err" ||
    fail "no prefix: status $rc: $(cat "$CB_TMP/err")"
rc=0
sh "$script" relative/prefix >"$CB_TMP/out" 2>"$CB_TMP/err" || rc=$?
[ "$rc" = 2 ] && grep -q "absolute path, not 'relative/prefix'" "$CB_TMP/err" ||
    fail "a relative prefix: status $rc: $(cat "$CB_TMP/err")"
: >"$src/config.status"
rc=0
sh "$script" "$CB_TMP/prefix" >"$CB_TMP/out" 2>"$CB_TMP/err" || rc=$?
[ "$rc" = 1 ] && grep -q 'configured in place (config.status)' "$CB_TMP/err" ||
    fail "a source configured in place: status $rc: $(cat "$CB_TMP/err")"
rm "$src/config.status"
[ ! -e "$CB_TMP/prefix" ] || fail "a refused build left $CB_TMP/prefix"

# CUDA and NCCL where this build found them (configure's -I), as the
# recipe finds them in the image.
cuda=$(sed -n 's|^CUDA_CPPFLAGS = -I\(.*\)/include$|\1|p' "$CB_BUILDDIR/Makefile")
nccl=$(sed -n 's|^NCCL_CPPFLAGS = -I\(.*\)/include$|\1|p' "$CB_BUILDDIR/Makefile")
set -- --with-mpi="$mpicc"
if [ -n "$cuda" ] && [ -n "$nccl" ]; then
    set -- "$@" --with-cuda="$cuda" --with-nccl="$nccl"
else
    set -- "$@" --without-nccl
fi
rc=0
BUILD_DIR="$CB_TMP/build" JOBS=2 nice sh "$script" "$CB_TMP/prefix" "$@" >"$CB_TMP/out" 2>"$CB_TMP/err" || rc=$?
[ "$rc" = 0 ] || { cat "$CB_TMP/out" "$CB_TMP/err" >&2; fail "build.sh: status $rc"; }
grep -qx "deploy/container/build.sh: installed nccl-collbench $version in $CB_TMP/prefix" "$CB_TMP/out" ||
    fail "no smoke test of version $version: $(cat "$CB_TMP/out")"
grep -q 'configuration summary' "$CB_TMP/out" || fail "configure's summary is not in the log: $(cat "$CB_TMP/out")"
for f in bin/nccl-collbench bin/nccl-collbench-compare bin/nccl-collbench-plot bin/nccl-collbench-health \
    bin/all_reduce_perf bin/sendrecv_perf; do
    [ -x "$CB_TMP/prefix/$f" ] || fail "not installed: $f"
done
[ -f "$CB_TMP/prefix/share/man/man1/nccl-collbench.1" ] || fail "the man page is not installed"
# The installed program runs by itself (what the image's last step does).
[ "$(id -u)" = 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=$("$CB_TMP/prefix/bin/nccl-collbench" --version) || fail "the installed program does not run"
[ "$out" = "nccl-collbench $version" ] || fail "--version printed: $out"
if [ -n "$nccl" ]; then
    grep -q '^  NCCL backend *: yes' "$CB_TMP/out" || fail "NCCL was given but not built: $(cat "$CB_TMP/out")"
    if command -v readelf >/dev/null 2>&1; then
        readelf -d "$CB_TMP/prefix/bin/nccl-collbench" | grep -q 'NEEDED.*libnccl' ||
            fail "the installed program does not link NCCL"
    fi
fi
echo "ok"
