"""Run a Spack recipe's build logic without Spack (tests/e2e/spack_recipe.sh).

python3 spack_harness.py PACKAGE.py MPICC [CUDA-PREFIX NCCL-PREFIX]

Loads the recipe against a small stand-in for spack.package that records
its directives, checks them (an AutotoolsPackage and a CudaPackage;
variants cuda and nccl, both on by default, nccl only with +cuda, and
nccl-tests-names, on by default; cuda_arch passed on to NCCL and its
handling stated; mpi, cuda and nccl dependencies), calls
configure_args() for every variant combination the recipe allows, with a
spec whose mpi has MPICC for its wrapper and whose cuda and nccl live at
the prefixes given (else under /spack/NAME), and calls check() with a make that records its calls.
Prints one line per combination: "+cuda~nccl<TAB>ARG<TAB>ARG...". Status 1
with a message when the recipe is not as expected.
"""
import importlib.util
import itertools
import sys
import types

recorded = []


def directive(name):
    def record(*args, **kwargs):
        recorded.append((name, args, kwargs))
    return record


class AutotoolsPackage:
    def __init__(self, spec):
        self.spec = spec


class CudaPackage:
    """Spack's mixin for CUDA packages: the cuda and cuda_arch variants."""
    cuda_arch_values = ("70", "80", "90", "100")


prefixes = {}


class Dependency:
    def __init__(self, name, mpicc):
        self.prefix = prefixes.get(name, "/spack/" + name)
        self.mpicc = mpicc if name == "mpi" else None


class Spec:
    def __init__(self, variants, mpicc):
        self.variants = variants   # {"cuda": bool, "nccl": bool}
        self.mpicc = mpicc

    def satisfies(self, text):
        sign, name = text[0], text[1:]
        if sign not in "+~" or name not in self.variants:
            raise ValueError("the harness knows no variant test %r" % text)
        return self.variants[name] == (sign == "+")

    def __contains__(self, text):
        return self.satisfies(text)

    def __getitem__(self, name):
        return Dependency(name, self.mpicc)


make_calls = []


def fake_make(*args, **kwargs):
    make_calls.append(args)
    if "list-tests" in args:
        return "tests/unit/unit_parse tests/cli/help.sh tests/unit/unit_plan\n"
    return None


def stand_in():
    package = types.ModuleType("spack.package")
    for name in ("version", "variant", "depends_on", "conflicts", "license", "maintainers",
                 "patch", "provides", "requires", "resource"):
        setattr(package, name, directive(name))
    package.AutotoolsPackage = AutotoolsPackage
    package.CudaPackage = CudaPackage
    package.make = fake_make
    package.__all__ = [n for n in dir(package) if not n.startswith("_")]
    spack = types.ModuleType("spack")
    spack.package = package
    sys.modules["spack"] = spack
    sys.modules["spack.package"] = package


def fail(message):
    print("spack_harness: " + message, file=sys.stderr)
    sys.exit(1)


def main():
    path, mpicc = sys.argv[1], sys.argv[2]
    if len(sys.argv) == 5:
        prefixes.update(cuda=sys.argv[3], nccl=sys.argv[4])
    stand_in()
    spec = importlib.util.spec_from_file_location("recipe", path)
    recipe = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(recipe)
    classes = [c for c in vars(recipe).values()
               if isinstance(c, type) and issubclass(c, AutotoolsPackage) and c is not AutotoolsPackage]
    if len(classes) != 1:
        fail("expected one AutotoolsPackage class, found %d" % len(classes))
    cls = classes[0]
    if cls.__name__ != "NcclCollbench":
        fail("the class is %s; Spack names nccl-collbench's NcclCollbench" % cls.__name__)
    variants = {a[0]: k for n, a, k in recorded if n == "variant"}
    if set(variants) != {"cuda", "nccl", "nccl-tests-names"}:
        fail("variants %s, expected cuda, nccl and nccl-tests-names" % sorted(variants))
    if not issubclass(cls, CudaPackage):
        fail("not a CudaPackage: Spack users expect cuda and cuda_arch from it")
    for name in ("cuda", "nccl", "nccl-tests-names"):
        if variants[name].get("default") is not True:
            fail("variant %s is not on by default" % name)
    if "cuda_arch" not in open(path).read():
        fail("the recipe does not say how it handles cuda_arch")
    if not any(n == "depends_on" and a[0].startswith("nccl cuda_arch=") for n, a, k in recorded):
        fail("cuda_arch is not passed on to nccl")
    deps = {(a[0], k.get("when")) for n, a, k in recorded if n == "depends_on"}
    for want in (("mpi", None), ("cuda", "+cuda"), ("nccl", "+nccl")):
        if want not in deps:
            fail("no depends_on(%r, when=%r)" % want)
    conflicts = {(a[0], k.get("when")) for n, a, k in recorded if n == "conflicts"}
    if not any(n == "version" for n, a, k in recorded):
        fail("no version")
    for cuda, nccl in itertools.product((False, True), repeat=2):
        name = "%scuda%snccl" % ("+" if cuda else "~", "+" if nccl else "~")
        if nccl and not cuda:
            if ("+nccl", "~cuda") not in conflicts and variants["nccl"].get("when") != "+cuda":
                fail("+nccl~cuda is allowed: NCCL needs the CUDA runtime")
            continue
        args = cls(Spec({"cuda": cuda, "nccl": nccl, "nccl-tests-names": True},
                        mpicc)).configure_args()
        if "--enable-nccl-tests-names" not in args:
            fail("%s: the names are not installed: %r" % (name, args))
        if not all(isinstance(a, str) for a in args):
            fail("%s: configure_args() gave %r" % (name, args))
        print("\t".join([name] + args))
    make_calls.clear()
    off = cls(Spec({"cuda": True, "nccl": True, "nccl-tests-names": False}, mpicc))
    if "--disable-nccl-tests-names" not in off.configure_args():
        fail("~nccl-tests-names does not leave the names out")
    cls(Spec({"cuda": False, "nccl": False, "nccl-tests-names": True}, mpicc)).check()
    checks = [c for c in make_calls if "check" in c]
    if len(checks) != 1 or "TESTS=tests/unit/unit_parse tests/unit/unit_plan" not in checks[0]:
        fail("check() ran make %r, expected check with the unit tests alone" % make_calls)


main()
