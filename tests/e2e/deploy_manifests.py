"""deploy_manifests.py DEPLOY_DIR: check the Kubernetes manifests under
DEPLOY_DIR/kubernetes and the container recipe DEPLOY_DIR/container/Containerfile
for what a cluster would refuse or a run would trip on: kinds and API
versions, the sizes that must agree (slots and GPUs, mpirun -np, -g,
parallelism and completions, NNODES), the rendezvous (headless Service,
subdomain, MASTER_ADDR, the key from a Secret), IPC_LOCK, a memory-backed
/dev/shm, and output files on a mounted volume; what a security review
asks and each document's shape (deploy_security.py). Prints one line per
problem (FILE: what) and exits 1, or prints what it checked and exits 0.
Needs PyYAML (the caller skips without it)."""

import glob
import os
import re
import shlex
import sys

import yaml

from deploy_security import check_pod_security, check_shape

KNOWN_KINDS = {
    ("v1", "Service"), ("v1", "PersistentVolumeClaim"), ("v1", "Secret"),
    ("kubeflow.org/v2beta1", "MPIJob"), ("batch/v1", "Job"),
    ("jobset.x-k8s.io/v1alpha2", "JobSet"), ("networking.k8s.io/v1", "NetworkPolicy"),
}
PROGRAM = "nccl-collbench"
# The options whose value is a file rank 0 writes ("-" is stdout).
OUTPUT_OPTIONS = ("--csv", "--json", "--prom", "-J")
COMPLETION_INDEX = "metadata.annotations['batch.kubernetes.io/job-completion-index']"


class Checker:
    def __init__(self):
        self.problems = []
        self.checked = []

    def bad(self, where, what):
        self.problems.append(f"{where}: {what}")

    def ok(self, what):
        self.checked.append(what)


def has_registry_host(image):
    """An image reference whose first component names a host (a dot, a
    port or localhost), as container tools read it."""
    first, slash, _ = image.partition("/")
    return bool(slash) and ("." in first or ":" in first or first == "localhost")


def as_int(value):
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and re.fullmatch(r"[0-9]+", value):
        return int(value)
    return None


def argv_of(c, where, container):
    """The container's command and args as one argv; every element must be
    a string (Kubernetes refuses numbers there). sh -c SCRIPT is split."""
    argv = list(container.get("command") or []) + list(container.get("args") or [])
    for a in argv:
        if not isinstance(a, str):
            c.bad(where, f"command/args element {a!r} is not a string ({type(a).__name__}): quote it")
    argv = [str(a) for a in argv]
    if len(argv) >= 3 and os.path.basename(argv[0]) in ("sh", "bash") and argv[1] == "-c":
        return shlex.split(argv[2]) + argv[3:]
    return argv


def program_args(argv):
    """The program's path and its arguments, or (None, [])."""
    for i, a in enumerate(argv):
        if os.path.basename(a) == PROGRAM:
            return a, argv[i + 1:]
    return None, []


def option_value(args, names, attached=True):
    """Every value given to one of the options names: NAME VALUE, and with
    attached NAME=VALUE (long ones) or -XVALUE (short ones)."""
    values = []
    for i, a in enumerate(args):
        for n in names:
            if a == n and i + 1 < len(args):
                values.append(args[i + 1])
            elif attached and n.startswith("--") and a.startswith(n + "="):
                values.append(a[len(n) + 1:])
            elif attached and not n.startswith("--") and a.startswith(n) and len(a) > len(n):
                values.append(a[len(n):])
    return values


def gpu_limit(c, where, container):
    limits = (container.get("resources") or {}).get("limits") or {}
    n = as_int(limits.get("nvidia.com/gpu"))
    if n is None or n < 1:
        c.bad(where, f"no whole nvidia.com/gpu limit ({limits.get('nvidia.com/gpu')!r})")
    return n


def env_of(container):
    return {e.get("name"): e for e in container.get("env") or []}


def check_env_strings(c, where, container):
    for name, e in env_of(container).items():
        if "value" in e and not isinstance(e["value"], str):
            c.bad(where, f"env {name}: value {e['value']!r} is not a string: quote it")


def check_pod(c, where, pod, docs, outputs):
    """The pod template's spec: IPC_LOCK, /dev/shm in memory, and every
    output file under a writable volume mount. Returns the first container."""
    containers = pod.get("containers") or []
    if not containers:
        c.bad(where, "no containers")
        return {}
    ctr = containers[0]
    volumes = {v.get("name"): v for v in pod.get("volumes") or []}
    mounts = ctr.get("volumeMounts") or []
    for m in mounts:
        if m.get("name") not in volumes:
            c.bad(where, f"volumeMount {m.get('name')!r} names no volume of the pod")
    caps = ((ctr.get("securityContext") or {}).get("capabilities") or {}).get("add") or []
    if "IPC_LOCK" not in caps:
        c.bad(where, f"IPC_LOCK is not among the added capabilities ({caps})")
    shm = [m for m in mounts if m.get("mountPath") == "/dev/shm"]
    if not shm:
        c.bad(where, "/dev/shm is not mounted")
    elif ((volumes.get(shm[0].get("name")) or {}).get("emptyDir") or {}).get("medium") != "Memory":
        c.bad(where, f"/dev/shm (volume {shm[0].get('name')!r}) is not an emptyDir of medium Memory")
    for path in outputs:
        if path == "-":
            continue
        if not path.startswith("/"):
            c.bad(where, f"output file {path} is relative: give it under the results volume")
            continue
        under = [m for m in mounts if m.get("mountPath") not in (None, "/dev/shm") and
                 path.startswith(m["mountPath"].rstrip("/") + "/")]
        if not under:
            c.bad(where, f"output file {path} is not on a mounted volume (mounts: "
                         f"{[m.get('mountPath') for m in mounts]})")
            continue
        m = under[0]
        if m.get("readOnly"):
            c.bad(where, f"output file {path}: its volume {m['name']!r} is mounted read-only")
        claim = ((volumes.get(m.get("name")) or {}).get("persistentVolumeClaim") or {}).get("claimName")
        if claim is not None and not any(d.get("kind") == "PersistentVolumeClaim" and
                                         d["metadata"].get("name") == claim for d in docs):
            c.bad(where, f"volume {m['name']!r} claims {claim!r}, which this file does not define")
        c.ok(f"{where}: {path} on volume {m['name']!r} at {m['mountPath']}")
    check_env_strings(c, where, ctr)
    return ctr


def check_mpijob(c, where, job, docs, prefix):
    spec = job.get("spec") or {}
    slots = as_int(spec.get("slotsPerWorker"))
    replicas = spec.get("mpiReplicaSpecs") or {}
    launcher, worker = replicas.get("Launcher") or {}, replicas.get("Worker") or {}
    if as_int(launcher.get("replicas")) != 1:
        c.bad(where, f"Launcher replicas is {launcher.get('replicas')!r}, not 1")
    workers = as_int(worker.get("replicas"))
    if workers is None or workers < 1:
        c.bad(where, f"Worker replicas {worker.get('replicas')!r} is not a whole number")
        return
    lpod = ((launcher.get("template") or {}).get("spec")) or {}
    wpod = ((worker.get("template") or {}).get("spec")) or {}
    lctrs = lpod.get("containers") or [{}]
    argv = argv_of(c, where + " Launcher", lctrs[0])
    path, args = program_args(argv)
    if path is None or "mpirun" not in [os.path.basename(a) for a in argv]:
        c.bad(where, f"the launcher's command runs no mpirun ... {PROGRAM}: {argv}")
        return
    if prefix is not None and path != f"{prefix}/bin/{PROGRAM}":
        c.bad(where, f"the launcher runs {path}; the image installs {prefix}/bin/{PROGRAM} "
                     "(ranks start through ssh, without the image's PATH)")
    mpirun_args = argv[[os.path.basename(a) for a in argv].index("mpirun") + 1:argv.index(path)]
    np_values = option_value(mpirun_args, ("-np", "-n", "--np", "--n"), attached=False)
    # Rank 0 runs on the first worker: its mounts hold the outputs.
    outputs = [v for o in OUTPUT_OPTIONS for v in option_value(args, (o,))]
    wctr = check_pod(c, where + " Worker", wpod, docs, outputs)
    gpus = gpu_limit(c, where + " Worker", wctr)
    if slots is None or slots != gpus:
        c.bad(where, f"slotsPerWorker {spec.get('slotsPerWorker')!r} differs from the workers' "
                     f"nvidia.com/gpu limit {gpus}")
    if len(np_values) != 1 or as_int(np_values[0]) is None:
        c.bad(where, f"mpirun has no single -np N: {mpirun_args}")
    elif slots is not None and as_int(np_values[0]) != workers * slots:
        c.bad(where, f"mpirun -np {np_values[0]} is not Worker replicas x slotsPerWorker "
                     f"= {workers} x {slots} = {workers * slots}")
    else:
        c.ok(f"{where}: mpirun -np {np_values[0]} = {workers} workers x {slots} slots = GPU limit")
    wargv = argv_of(c, where + " Worker", wctr)
    if not any("sshd" in a for a in wargv):
        c.bad(where, f"the workers run no sshd, which mpirun reaches them through: {wargv}")


def check_indexed(c, where, jobspec, docs, job_name, pod_host0, subdomain_default=None):
    """An Indexed Job's spec (batch/v1 Job, or a JobSet's replicated Job):
    pod_host0 is the index-0 pod's hostname."""
    if jobspec.get("completionMode") != "Indexed":
        c.bad(where, f"completionMode is {jobspec.get('completionMode')!r}, not Indexed")
    completions = as_int(jobspec.get("completions"))
    parallelism = as_int(jobspec.get("parallelism"))
    if completions is None or completions != parallelism:
        c.bad(where, f"parallelism {jobspec.get('parallelism')!r} != completions "
                     f"{jobspec.get('completions')!r}: every node's pod must run at once")
    if as_int(jobspec.get("backoffLimit")) != 0:
        c.bad(where, f"backoffLimit is {jobspec.get('backoffLimit')!r}: a failed check would be rerun")
    template = jobspec.get("template") or {}
    pod = template.get("spec") or {}
    ctrs = pod.get("containers") or [{}]
    argv = argv_of(c, where, ctrs[0])
    path, args = program_args(argv)
    if path is None:
        c.bad(where, f"the command does not run {PROGRAM}: {argv}")
        return
    outputs = [v for o in OUTPUT_OPTIONS for v in option_value(args, (o,))]
    ctr = check_pod(c, where, pod, docs, outputs)
    gpus = gpu_limit(c, where, ctr)
    g = option_value(args, ("-g",))
    if len(g) != 1 or as_int(g[0]) != gpus:
        c.bad(where, f"-g {g} does not equal the nvidia.com/gpu limit {gpus}")
    else:
        c.ok(f"{where}: -g {g[0]} = GPU limit; parallelism = completions = {completions}")
    env = env_of(ctr)
    nnodes = (env.get("NNODES") or {}).get("value")
    if as_int(nnodes) != completions:
        c.bad(where, f"NNODES {nnodes!r} is not the number of pods (completions {completions})")
    node_rank = env.get("NODE_RANK") or {}
    field = ((node_rank.get("valueFrom") or {}).get("fieldRef") or {}).get("fieldPath")
    if field != COMPLETION_INDEX and node_rank.get("value") != "$(JOB_COMPLETION_INDEX)":
        c.bad(where, f"NODE_RANK is not the pod's completion index: {node_rank}")
    subdomain = pod.get("subdomain") or subdomain_default
    addr = (env.get("MASTER_ADDR") or {}).get("value") or ""
    if not subdomain:
        c.bad(where, "the pods have no subdomain: the index-0 pod has no DNS name")
    elif not re.fullmatch(re.escape(f"{pod_host0}.{subdomain}") + r"(\..*)?", addr):
        c.bad(where, f"MASTER_ADDR {addr!r} is not the index-0 pod's name {pod_host0}.{subdomain}")
    else:
        c.ok(f"{where}: MASTER_ADDR {addr}")
    port = as_int((env.get("MASTER_PORT") or {}).get("value"))
    if port is None or not 0 < port < 65536:
        c.bad(where, f"MASTER_PORT {(env.get('MASTER_PORT') or {}).get('value')!r} is not a port")
    key = env.get("NCCL_COLLBENCH_KEY") or {}
    if "secretKeyRef" not in (key.get("valueFrom") or {}):
        c.bad(where, f"NCCL_COLLBENCH_KEY does not come from a Secret: {key}")
    if subdomain_default is None:
        # A batch/v1 Job: the headless Service is ours to define.
        services = [d for d in docs if d.get("kind") == "Service" and
                    d["metadata"].get("name") == subdomain]
        if not services:
            c.bad(where, f"no Service named {subdomain!r} (the pods' subdomain) in this file")
            return
        svc = services[0].get("spec") or {}
        if svc.get("clusterIP") != "None":
            c.bad(where, f"Service {subdomain!r} is not headless (clusterIP {svc.get('clusterIP')!r})")
        labels = (template.get("metadata") or {}).get("labels") or {}
        selector = svc.get("selector") or {}
        if not selector or any(labels.get(k) != v for k, v in selector.items()):
            c.bad(where, f"Service {subdomain!r} selects {selector}, not the pods' labels {labels}")
        ports = [as_int(p.get("port")) for p in svc.get("ports") or []]
        if ports and port not in ports:
            c.bad(where, f"MASTER_PORT {port} is not among Service {subdomain!r}'s ports {ports}")


def instructions(text):
    """The Containerfile's instructions, continuation lines joined, comments
    dropped: (KEYWORD, rest)."""
    out = []
    for line in re.sub(r"\\\n", " ", text).splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            out.append((word.upper(), rest.strip()))
    return out


def check_containerfile(c, path, where):
    """The recipe: base image, packages, build script; returns its PREFIX."""
    steps = instructions(open(path, encoding="utf-8").read())
    args = {}   # each ARG's default where it is given one (ARG NAME alone re-declares)
    for word, rest in steps:
        m = re.match(r"(\w+)=(\S*)", rest) if word == "ARG" else None
        if m and m.group(2) and m.group(1) not in args:
            args[m.group(1)] = m.group(2)
    base = args.get("BASE_IMAGE", "")
    if not re.fullmatch(r"nvidia/cuda:[0-9.]+-devel-ubuntu24\.04", base):
        c.bad(where, f"ARG BASE_IMAGE={base!r} is not a CUDA devel image on Ubuntu 24.04 "
                     "(nvidia/cuda:X-devel-ubuntu24.04)")
    images = [v for k, v in args.items() if k.endswith("IMAGE")]
    images += [rest.split()[0] for word, rest in steps if word == "FROM" and "$" not in rest]
    for image in images:
        if has_registry_host(image):
            c.bad(where, f"image {image!r} names a registry host: name the image alone")
    # The build stage: from FROM ${BASE_IMAGE} to the next FROM.
    in_build, has_build, build = False, False, []
    for word, rest in steps:
        if word == "FROM":
            in_build = re.match(r"\$\{?BASE_IMAGE\}?(\s|$)", rest) is not None
            has_build = has_build or in_build
        elif in_build:
            build.append((word, rest))
    if not has_build:
        c.bad(where, "no stage is FROM ${BASE_IMAGE}")
    installed = set()
    for word, rest in build:
        if word == "RUN" and "apt-get install" in rest:
            installed |= set(re.findall(r"[A-Za-z0-9][A-Za-z0-9.+-]*", rest))
    for pkg in ("libnccl2", "libnccl-dev", "openmpi-bin", "libopenmpi-dev", "autoconf", "automake"):
        if pkg not in installed:
            c.bad(where, f"the build stage installs no {pkg}")
    copied = [i for i, (w, r) in enumerate(build) if w == "COPY" and r.split()[:1] == ["."]]
    ran = [i for i, (w, r) in enumerate(build) if w == "RUN" and "deploy/container/build.sh" in r]
    if not copied or not ran or ran[-1] < copied[0]:
        c.bad(where, "the build stage does not COPY . (the source) and then RUN deploy/container/build.sh")
    c.ok(f"{where}: FROM {base}; installs NCCL, Open MPI and autotools; runs build.sh")
    return args.get("PREFIX")


def main():
    if len(sys.argv) != 2:
        print("usage: deploy_manifests.py DEPLOY_DIR", file=sys.stderr)
        return 2
    top = sys.argv[1]
    c = Checker()
    # Files are named as from the folder above DEPLOY_DIR (deploy/...).
    base = os.path.dirname(os.path.abspath(top))
    path = os.path.join(top, "container", "Containerfile")
    prefix = check_containerfile(c, path, os.path.relpath(path, base))
    files = sorted(glob.glob(os.path.join(top, "kubernetes", "*.yaml")))
    seen = set()
    c.ok("schemas: required fields checked structurally here; deploy_schemas.py validates "
         "against the published Kubernetes schemas")
    for path in files:
        where = os.path.relpath(path, base)
        try:
            with open(path, encoding="utf-8") as f:
                raw = f.read()
            docs = [d for d in yaml.safe_load_all(raw) if d is not None]
        except yaml.YAMLError as e:
            c.bad(where, f"not YAML: {e}")
            continue
        for d in docs:
            if not isinstance(d, dict) or not isinstance(d.get("metadata"), dict) or \
                    not d["metadata"].get("name"):
                c.bad(where, f"a document without kind, apiVersion or metadata.name: {str(d)[:80]}")
                continue
            kind, api, name = d.get("kind"), d.get("apiVersion"), d["metadata"]["name"]
            if (api, kind) not in KNOWN_KINDS:
                c.bad(where, f"{kind} {name}: unexpected kind and apiVersion {api!r}")
                continue
            seen.add(kind)
            for img in re.findall(r"'image': '([^']*)'", str(d)):
                if has_registry_host(img):
                    c.bad(where, f"image {img!r} names a registry host: name the image alone")
            spec = d.get("spec") or {}
            label = f"{where} {kind} {name}"
            check_shape(c, label, d)

            def secure(what, template, tcp_key):
                template = template or {}
                check_pod_security(c, what, template.get("spec") or {},
                                   (template.get("metadata") or {}).get("labels") or {}, docs, raw,
                                   tcp_key)
            if kind == "MPIJob":
                check_mpijob(c, label, d, docs, prefix)
                # Under mpirun the ranks meet through MPI: no key to require.
                for role in ("Launcher", "Worker"):
                    secure(f"{label} {role}",
                           ((spec.get("mpiReplicaSpecs") or {}).get(role) or {}).get("template"),
                           False)
            elif kind == "Job":
                check_indexed(c, label, spec, docs, name, f"{name}-0")
                secure(label, spec.get("template"), True)
            elif kind == "JobSet":
                rjobs = spec.get("replicatedJobs") or []
                if len(rjobs) != 1 or as_int(rjobs[0].get("replicas")) != 1:
                    c.bad(label, "expected one replicated Job of 1 replica (its completion index is the node's)")
                    continue
                net = spec.get("network") or {}
                if net.get("enableDNSHostnames") is not True:
                    c.bad(label, "network.enableDNSHostnames is not true: the pods have no DNS names")
                rj = rjobs[0]
                check_indexed(c, f"{label} {rj.get('name')}", (rj.get("template") or {}).get("spec") or {},
                              docs, name, f"{name}-{rj.get('name')}-0-0", net.get("subdomain") or name)
                secure(f"{label} {rj.get('name')}",
                       ((rj.get("template") or {}).get("spec") or {}).get("template"), True)
    for kind in ("MPIJob", "Job"):
        if kind not in seen:
            c.bad(top, f"no {kind} in {[os.path.relpath(f, base) for f in files]}")
    if c.problems:
        print("\n".join(c.problems))
        return 1
    print("\n".join(c.checked))
    return 0


if __name__ == "__main__":
    sys.exit(main())
