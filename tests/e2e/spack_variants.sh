# contrib/spack/package.py's directives and configure arguments, without
# Spack and without building (the build is tests/e2e/spack_recipe.sh's):
# a CudaPackage with CUDA and NCCL on by default (~cuda: CPU only), the
# cuda_arch handling stated and passed on to NCCL, nccl-tests' names
# installed unless ~nccl-tests-names (tests/support/spack_harness.py).
. "$CB_SRCDIR/tests/support/lib.sh"
need_python
"$CB_PYTHON" "$CB_SRCDIR/tests/support/spack_harness.py" "$CB_SRCDIR/contrib/spack/package.py" \
    /spack/mpi/bin/mpicc >"$CB_TMP/variants" 2>"$CB_TMP/harness.err" ||
    fail "the recipe: $(cat "$CB_TMP/harness.err")"
grep -q '^~cuda~nccl	.*--without-cuda	--without-nccl' "$CB_TMP/variants" ||
    fail "~cuda is not CPU only: $(cat "$CB_TMP/variants")"
grep -q '^+cuda+nccl	.*--with-nccl=/spack/nccl	--enable-nccl-tests-names$' "$CB_TMP/variants" ||
    fail "+cuda+nccl: $(cat "$CB_TMP/variants")"
exit 0
