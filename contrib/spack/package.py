# Spack recipe for nccl-collbench: copy this file to
# packages/nccl-collbench/package.py of a Spack repository of yours
# (spack repo create DIR; spack repo add DIR).
#
# There is no public download yet: put the release tarball (make dist)
# where Spack looks before the url below, a source mirror of the site's
# (spack mirror add NAME DIR), as DIR/nccl-collbench/nccl-collbench-0.1.0.tar.gz,
# and record its checksum here (sha256=... from sha256sum) or install with
# --no-checksum. Checked without Spack by tests/e2e/spack_recipe.sh.

from spack.package import *


class NcclCollbench(AutotoolsPackage):
    """Measure and verify NCCL and MPI collective operations across the
    ranks of an MPI job, one rank per GPU, with nccl-tests' columns."""

    url = "file:///opt/spack-mirror/nccl-collbench/nccl-collbench-0.1.0.tar.gz"

    license("BSD-3-Clause")

    version("0.1.0")

    variant("cuda", default=False, description="Build with the CUDA runtime (needed by +nccl)")
    variant("nccl", default=False, description="Build the NCCL backend (GPU buffers, NCCL calls)")

    conflicts("+nccl", when="~cuda", msg="the NCCL backend runs on the CUDA runtime: add +cuda")

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
        return args

    def check(self):
        # The whole suite starts MPI jobs (as root it brings up network
        # namespaces and Slurm) and takes minutes: the unit tests need none.
        tests = [t for t in make("-s", "list-tests", output=str).split()
                 if t.startswith("tests/unit/")]
        make("check", "TESTS={0}".format(" ".join(tests)))
