# contrib/spack/package.py without Spack: python3 loads it against a
# stand-in for spack.package (tests/support/spack_harness.py), which checks
# its variants (+cuda, +nccl), dependencies and conflicts and prints the
# configure arguments of each variant; every argument must be an option of
# the release tarball's configure, and the plain variant (~cuda~nccl) is
# configured and built from the tarball, as Spack would, and run.
. "$CB_SRCDIR/tests/support/lib.sh"
. "$CB_SRCDIR/tests/support/dist.sh"
need_mpirun
need_python
mpicc=$(sed -n 's/^MPICC = //p' "$CB_BUILDDIR/Makefile")
[ -n "$mpicc" ] && [ -x "$mpicc" ] || mpicc=$(command -v mpicc) ||
    skip "no mpicc for the recipe's MPI"

# Where this build found CUDA and NCCL (configure's -I), for the variants
# that need them; none: they are checked by their arguments alone.
cuda=$(sed -n 's|^CUDA_CPPFLAGS = -I\(.*\)/include$|\1|p' "$CB_BUILDDIR/Makefile")
nccl=$(sed -n 's|^NCCL_CPPFLAGS = -I\(.*\)/include$|\1|p' "$CB_BUILDDIR/Makefile")
[ -n "$cuda" ] && [ -n "$nccl" ] || cuda="" nccl=""
"$CB_PYTHON" "$CB_SRCDIR/tests/support/spack_harness.py" "$CB_SRCDIR/contrib/spack/package.py" \
    "$mpicc" $cuda $nccl >"$CB_TMP/variants" 2>"$CB_TMP/harness.err" ||
    fail "the recipe: $(cat "$CB_TMP/harness.err")"
for v in '~cuda~nccl' '+cuda~nccl' '+cuda+nccl'; do
    grep -q "^$v	" "$CB_TMP/variants" || fail "no configure arguments for $v: $(cat "$CB_TMP/variants")"
done
grep -q '^~cuda~nccl	.*--without-nccl' "$CB_TMP/variants" || fail "~nccl does not turn NCCL off"
grep -q "^+cuda+nccl	--with-mpi=$mpicc	--with-cuda=${cuda:-/spack/cuda}	--with-nccl=${nccl:-/spack/nccl}	--enable-nccl-tests-names\$" \
    "$CB_TMP/variants" || fail "+cuda+nccl: $(grep '^+cuda+nccl' "$CB_TMP/variants")"

mkdir "$CB_TMP/made"
make_tarball "$CB_TMP/made"
mkdir "$CB_TMP/stage"
(cd "$CB_TMP/stage" && tar xzf "$tarball") || fail "unpacking $tarball"
src="$CB_TMP/stage/$dist_name"
[ -x "$src/configure" ] || fail "the tarball has no configure: Spack would need autotools"
"$src/configure" --help >"$CB_TMP/help" || fail "configure --help"
# Every argument of every variant is an option configure knows.
cut -f2- "$CB_TMP/variants" | tr '\t' '\n' | sed 's/=.*//; s/^--without-/--with-/; s/^--disable-/--enable-/' |
    sort -u >"$CB_TMP/options"
while read -r opt; do
    # configure --help names a default-on feature by its --disable- form.
    off=$(echo "$opt" | sed 's/^--enable-/--disable-/; s/^--with-/--without-/')
    grep -qE -- "^  ($opt|$off)(\[=|=| |\$)" "$CB_TMP/help" || fail "configure knows no $opt"
done <"$CB_TMP/options"
[ "$(wc -l <"$CB_TMP/options")" -ge 3 ] || fail "options: $(cat "$CB_TMP/options")"

# configure VARIANT: configure from the tarball with VARIANT's arguments,
# in $CB_TMP/buildVARIANT; its summary in $CB_TMP/buildVARIANT/summary.
configure() {
    dir="$CB_TMP/build$1"
    mkdir "$dir"
    args=$(grep "^$1	" "$CB_TMP/variants" | cut -f2-)
    # shellcheck disable=SC2086 # the recipe's arguments, one word each
    (cd "$dir" && IFS='	' && nice "$src/configure" --prefix="$CB_TMP/prefix" $args >configure.log 2>&1) ||
        { tail -n 30 "$dir/configure.log"; fail "configure of $1 from the tarball"; }
    sed -n '/configuration summary/,$p' "$dir/configure.log" >"$dir/summary"
}
# Where CUDA and NCCL are here, configure checks the +cuda variants' paths.
if [ -n "$cuda" ]; then
    configure '+cuda~nccl'
    grep -q "^  CUDA *: $cuda" "$CB_TMP/build+cuda~nccl/summary" && grep -q '^  NCCL backend *: no' \
        "$CB_TMP/build+cuda~nccl/summary" || fail "+cuda~nccl: $(cat "$CB_TMP/build+cuda~nccl/summary")"
    configure '+cuda+nccl'
    grep -q '^  NCCL backend *: yes' "$CB_TMP/build+cuda+nccl/summary" ||
        fail "+cuda+nccl: $(cat "$CB_TMP/build+cuda+nccl/summary")"
else
    echo "note: no CUDA and NCCL here: the +cuda variants are checked by their arguments alone"
fi
# Spack's build of ~cuda~nccl: configure, make, make install, and a run.
configure '~cuda~nccl'
grep -q '^  NCCL backend *: no' "$CB_TMP/build~cuda~nccl/summary" ||
    fail "~cuda~nccl: $(cat "$CB_TMP/build~cuda~nccl/summary")"
(cd "$CB_TMP/build~cuda~nccl" && nice make -j"$(nproc 2>/dev/null || echo 2)" >make.log 2>&1 &&
    make install >install.log 2>&1) ||
    { tail -n 30 "$CB_TMP/build~cuda~nccl/make.log" "$CB_TMP/build~cuda~nccl/install.log"
      fail "make from the tarball"; }
bin="$CB_TMP/prefix/bin/nccl-collbench"
[ -x "$bin" ] || fail "make install put no nccl-collbench in the prefix"
[ -h "$CB_TMP/prefix/bin/all_reduce_perf" ] || fail "make install put no all_reduce_perf in the prefix"
CB_RUN_BIN=$bin run 2 -b 8 -e 64 -n 2
expect_rc 0 "the program Spack's steps built"
grep -q '^ *64 ' "$CB_TMP/out" || fail "the built program's table: $(cat "$CB_TMP/out")"
echo "ok"
