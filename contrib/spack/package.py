# Spack recipe for nccl-collbench: copy this file to
# packages/nccl-collbench/package.py of a Spack repository of yours
# (spack repo create DIR; spack repo add DIR).
#
# There is no public download yet: put the release tarball (make dist)
# where Spack looks before the url below, a source mirror of the site's
# (spack mirror add NAME DIR), as DIR/nccl-collbench/nccl-collbench-0.1.0.tar.gz,
# and record its checksum here (sha256=... from sha256sum) or install with
# --no-checksum. Checked without Spack by tests/e2e/spack_recipe.sh.
#
#   spack install nccl-collbench                 # CUDA and NCCL (the default)
#   spack install nccl-collbench cuda_arch=90    # NCCL built for Hopper
#   spack install nccl-collbench ~cuda           # CPU only: the MPI backend

from spack.package import *


class NcclCollbench(AutotoolsPackage, CudaPackage):
    """Measure and verify NCCL and MPI collective operations across the
    ranks of an MPI job, one rank per GPU, with nccl-tests' columns.
    Installs nccl-tests' program names (all_reduce_perf, ...) as links."""

    url = "file:///opt/spack-mirror/nccl-collbench/nccl-collbench-0.1.0.tar.gz"

    license("BSD-3-Clause")

    version("0.1.0")

    # A GPU package by default: CUDA and the NCCL backend. ~cuda builds
    # the MPI backend alone (a laptop, a CPU-only cluster).
    variant("cuda", default=True, description="Build with the CUDA runtime and the NCCL backend")
    variant("nccl", default=True, when="+cuda",
            description="Build the NCCL backend (GPU buffers, NCCL calls)")
    variant("nccl-tests-names", default=True,
            description="Install nccl-tests' program names (all_reduce_perf, ...) as links; "
                        "turn off where a real nccl-tests shares the prefix")

    # cuda_arch (from CudaPackage): nccl-collbench compiles no device code
    # of its own (its one kernel, -B's compare, is PTX that the driver
    # compiles for the GPU it runs on), so it needs no cuda_arch and
    # accepts any; the value given is passed on to NCCL, whose kernels
    # are compiled for it, as Spack does for a CUDA package's dependencies.
    for _arch in CudaPackage.cuda_arch_values:
        depends_on("nccl cuda_arch={0}".format(_arch), when="+nccl cuda_arch={0}".format(_arch))

    depends_on("c", type="build")
    depends_on("mpi")
    depends_on("cuda", when="+cuda")
    depends_on("nccl", when="+nccl")

    def configure_args(self):
        spec = self.spec
        # The MPI's own compiler wrapper: configure builds with it.
        args = ["--with-mpi={0}".format(spec["mpi"].mpicc)]
        if spec.satisfies("+cuda"):
            args.append("--with-cuda={0}".format(spec["cuda"].prefix))
        else:
            args.append("--without-cuda")
        if spec.satisfies("+nccl"):
            args.append("--with-nccl={0}".format(spec["nccl"].prefix))
        else:
            args.append("--without-nccl")
        if spec.satisfies("+nccl-tests-names"):
            args.append("--enable-nccl-tests-names")
        else:
            args.append("--disable-nccl-tests-names")
        return args

    def check(self):
        # The whole suite starts MPI jobs (as root it brings up network
        # namespaces and Slurm) and takes minutes: the unit tests need none.
        tests = [t for t in make("-s", "list-tests", output=str).split()
                 if t.startswith("tests/unit/")]
        make("check", "TESTS={0}".format(" ".join(tests)))
