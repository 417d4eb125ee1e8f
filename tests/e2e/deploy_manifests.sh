# deploy/: the Kubernetes manifests (MPIJob, Indexed Job, JobSet) and the
# container recipe, read with PyYAML by tests/e2e/deploy_manifests.py: kinds
# and API versions, slotsPerWorker = the workers' GPU limit, mpirun -np =
# workers x slots, -g = the GPU limit, parallelism = completions = NNODES,
# the rendezvous, IPC_LOCK, /dev/shm in memory, outputs on a volume, the
# base image; and what a security review asks (deploy_security.py, issue
# 44): CPU and memory requests and limits, no service account token, images
# by tag and digest, a NetworkPolicy admitting only the job's pods, the key
# from a Secret with --require-key, IPC_LOCK with root and the "privileged"
# Pod Security level said; each document's required fields, by hand.
# Then each of those broken on purpose in a copy, one at a time: the check
# must name it. Last, every document against the published Kubernetes JSON
# schemas of Kubernetes 1.31, strictly (deploy_schemas.py, with the Python
# of the venv holding kubernetes-validate that ci/install-deps.sh makes:
# CB_K8S_VALIDATE, by default /opt/nccl-collbench-k8s/bin/python; the test
# skips after the checks above where there is none). MPIJob and JobSet are
# custom resources with no published schema: their pod templates are
# validated as PodTemplateSpec (MPIJob) and JobSpec (JobSet) instead.
. "$CB_SRCDIR/tests/support/lib.sh"
need_python
"$CB_PYTHON" -c 'import yaml' 2>/dev/null ||
    skip "python3 has no yaml module (PyYAML: Debian's python3-yaml), which reads the manifests"
check="$CB_SRCDIR/tests/e2e/deploy_manifests.py"
"$CB_PYTHON" "$check" "$CB_SRCDIR/deploy" >"$CB_TMP/ok" 2>&1 || fail "deploy/: $(cat "$CB_TMP/ok")"
for what in 'mpirun -np 16 = 2 workers x 8 slots' 'indexed-job.yaml Job nccl-collbench: -g 8 = GPU limit' \
    'jobset.yaml JobSet nccl-collbench node: -g 8' 'MASTER_ADDR nccl-collbench-0.nccl-collbench' \
    'mpijob.yaml MPIJob nccl-collbench Worker: /results/allreduce.csv on volume' \
    'FROM nvidia/cuda:' 'schemas: ' \
    'indexed-job.yaml Job nccl-collbench: NetworkPolicy nccl-collbench: admits the job' \
    'jobset.yaml JobSet nccl-collbench node: the key from Secret nccl-collbench-key with --require-key' \
    'mpijob.yaml MPIJob nccl-collbench Worker container worker: image by tag'; do
    grep -qF "$what" "$CB_TMP/ok" || fail "not checked: $what: $(cat "$CB_TMP/ok")"
done

# broken FILE SED_SCRIPT EXPECTED: the check fails on a copy of deploy/ with
# FILE edited, naming EXPECTED.
broken() {
    rm -rf "$CB_TMP/deploy"
    cp -R "$CB_SRCDIR/deploy" "$CB_TMP/deploy"
    sed -e "$2" "$CB_SRCDIR/deploy/$1" >"$CB_TMP/deploy/$1"
    cmp -s "$CB_SRCDIR/deploy/$1" "$CB_TMP/deploy/$1" && fail "the edit '$2' changed nothing in $1"
    rc=0
    "$CB_PYTHON" "$check" "$CB_TMP/deploy" >"$CB_TMP/bad" 2>&1 || rc=$?
    [ "$rc" = 1 ] || fail "$1 edited with '$2': status $rc, expected 1: $(cat "$CB_TMP/bad")"
    grep -qF -- "$3" "$CB_TMP/bad" || fail "$1 edited with '$2': '$3' not named: $(cat "$CB_TMP/bad")"
}
broken kubernetes/mpijob.yaml 's/slotsPerWorker: 8/slotsPerWorker: 4/' 'slotsPerWorker 4 differs'
broken kubernetes/mpijob.yaml '/^ *- -np$/{n;s/"16"/"12"/;}' 'mpirun -np 12 is not'
broken kubernetes/mpijob.yaml 's/^      replicas: 2$/      replicas: 3/' 'mpirun -np 16 is not'
broken kubernetes/mpijob.yaml 's/add: \[IPC_LOCK\]/add: [SYS_NICE]/' 'IPC_LOCK is not among'
broken kubernetes/mpijob.yaml '/medium: Memory/d' 'is not an emptyDir of medium Memory'
broken kubernetes/mpijob.yaml 's|/results/allreduce.csv|/tmp/allreduce.csv|' '/tmp/allreduce.csv is not on a mounted volume'
broken kubernetes/mpijob.yaml 's|/opt/nccl-collbench/bin/nccl-collbench|nccl-collbench|' 'the image installs'
broken kubernetes/indexed-job.yaml '/^ *- -g$/{n;s/"8"/"4"/;}' "-g ['4'] does not equal the nvidia.com/gpu limit 8"
broken kubernetes/indexed-job.yaml 's/parallelism: 2/parallelism: 1/' 'parallelism 1 != completions 2'
broken kubernetes/indexed-job.yaml 's/value: "2"/value: "3"/' "NNODES '3'"
broken kubernetes/indexed-job.yaml 's/value: nccl-collbench-0.nccl-collbench/value: nccl-collbench-1.nccl-collbench/' \
    "MASTER_ADDR 'nccl-collbench-1.nccl-collbench' is not"
broken kubernetes/indexed-job.yaml 's/clusterIP: None/clusterIP: 10.0.0.10/' 'not headless'
broken kubernetes/indexed-job.yaml '/^ *- -b$/{n;s/"8"/8/;}' 'is not a string (int)'
broken kubernetes/indexed-job.yaml 's|mountPath: /results|mountPath: /data|' 'not on a mounted volume'
broken kubernetes/jobset.yaml 's/completions: 2/completions: 4/' 'parallelism 2 != completions 4'
broken container/Containerfile 's|^ARG BASE_IMAGE=|ARG BASE_IMAGE=mirror.invalid:5000/|' 'names a registry host'
broken container/Containerfile 's/libnccl-dev//' 'installs no libnccl-dev'
broken container/Containerfile 's|deploy/container/build.sh|ci/build.sh|' 'then RUN deploy/container/build.sh'
# Issue 44: the security review's points, each broken once.
broken kubernetes/indexed-job.yaml 's/automountServiceAccountToken: false/automountServiceAccountToken: true/' \
    'automountServiceAccountToken is not false'
broken kubernetes/indexed-job.yaml 's/image: nccl-collbench:.*/image: nccl-collbench:latest/' \
    'is not named by tag and digest'
broken kubernetes/mpijob.yaml '0,/:0\.1\.0@/s/:0\.1\.0@/:latest@/' 'is tagged latest'
broken kubernetes/jobset.yaml '0,/memory: 64Gi/{/memory: 64Gi/d;}' 'no memory in resources.requests'
broken kubernetes/mpijob.yaml '0,/cpu: "1"/{/cpu: "1"/d;}' 'no cpu in resources.requests'
broken kubernetes/indexed-job.yaml '/- --require-key/d' 'lacks --require-key'
broken kubernetes/jobset.yaml 's/^        - podSelector:/        - namespaceSelector:/' "not the job's own pods alone"
broken kubernetes/indexed-job.yaml 's/policyTypes: \[Ingress\]/policyTypes: [Egress]/' 'lack Ingress'
broken kubernetes/mpijob.yaml '/^kind: NetworkPolicy/,/^---/s/name: nccl-collbench$/name: other/' \
    'no NetworkPolicy in this file selects the pods'
broken kubernetes/jobset.yaml '/runAsUser: 0/d' 'does not say it runs as root'
broken kubernetes/indexed-job.yaml 's/"privileged" Pod Security level/privileged level/' \
    'needs the "privileged" Pod Security level'
broken kubernetes/indexed-job.yaml '/^      port: 29500$/d' 'required field spec.ports[].port is missing'

# The published schemas (issue 44): every document of every manifest, or
# for MPIJob and JobSet their embedded templates, against Kubernetes 1.31's.
kv=${CB_K8S_VALIDATE:-/opt/nccl-collbench-k8s/bin/python}
[ -x "$kv" ] && "$kv" -c 'import kubernetes_validate' 2>/dev/null ||
    skip "the checks above passed, but no Python with kubernetes-validate at $kv" \
        "(CB_K8S_VALIDATE; ci/install-deps.sh installs it) to validate the manifests" \
        "against the published Kubernetes schemas"
schemas="$CB_SRCDIR/tests/e2e/deploy_schemas.py"
rm -rf "$CB_TMP/deploy"
cp -R "$CB_SRCDIR/deploy" "$CB_TMP/deploy"
(cd "$CB_TMP/deploy" && "$kv" "$schemas" kubernetes/*.yaml) >"$CB_TMP/ok" 2>&1 ||
    fail "deploy/kubernetes against the schemas: $(cat "$CB_TMP/ok")"
for what in 'indexed-job.yaml Service nccl-collbench: valid' 'indexed-job.yaml Job nccl-collbench: valid' \
    'indexed-job.yaml NetworkPolicy nccl-collbench: valid' \
    'indexed-job.yaml PersistentVolumeClaim nccl-collbench-results: valid' \
    'jobset.yaml JobSet nccl-collbench: replicatedJobs[0] (node) template as a JobSpec valid' \
    'mpijob.yaml MPIJob nccl-collbench: Launcher template as a PodTemplateSpec valid' \
    'mpijob.yaml MPIJob nccl-collbench: Worker template as a PodTemplateSpec valid' \
    'mpijob.yaml NetworkPolicy nccl-collbench: valid' "against Kubernetes 1.31's schema (strict)"; do
    grep -qF "$what" "$CB_TMP/ok" || fail "not validated: $what: $(cat "$CB_TMP/ok")"
done

# refused FILE SED_SCRIPT EXPECTED: the schemas refuse a copy of FILE
# edited, naming EXPECTED (the document and where in it), as
# refusedN/FILE. The copies are validated together, in one run, at the end.
n=0
expected=""
refused() {
    n=$((n + 1))
    mkdir -p "$CB_TMP/deploy/refused$n/kubernetes"
    sed -e "$2" "$CB_SRCDIR/deploy/$1" >"$CB_TMP/deploy/refused$n/$1"
    cmp -s "$CB_SRCDIR/deploy/$1" "$CB_TMP/deploy/refused$n/$1" && fail "the edit '$2' changed nothing in $1"
    expected="$expected
refused$n/$1 $3"
}
# A wrong type, in a kind with a schema and in a JobSet's JobSpec.
refused kubernetes/indexed-job.yaml 's/^      port: 29500$/      port: "29500"/' \
    "Service nccl-collbench: schema at spec.ports.0.port: '29500' is not of type 'integer'"
refused kubernetes/jobset.yaml 's/^          parallelism: 2$/          parallelism: two/' \
    "JobSet nccl-collbench: schema at spec.replicatedJobs[0].template.spec.parallelism: 'two' is not of type 'integer'"
# Unknown fields, refused because strict: in a Job's pod and an MPIJob's.
refused kubernetes/indexed-job.yaml 's/^\( *\)medium: Memory$/&\n\1sizeLimt: 1Gi/' \
    "Job nccl-collbench: schema at spec.template.spec.volumes.0.emptyDir: Additional properties are not allowed ('sizeLimt' was unexpected)"
refused kubernetes/mpijob.yaml 's/automountServiceAccountToken: false/automountServiceAcountToken: false/' \
    "MPIJob nccl-collbench: schema at spec.mpiReplicaSpecs.Launcher.template.spec: Additional properties are not allowed ('automountServiceAcountToken' was unexpected)"
rc=0
(cd "$CB_TMP/deploy" && "$kv" "$schemas" refused*/kubernetes/*.yaml) >"$CB_TMP/bad" 2>&1 || rc=$?
[ "$rc" = 1 ] || fail "schemas, the edited copies: status $rc, expected 1: $(cat "$CB_TMP/bad")"
echo "$expected" | while IFS= read -r what; do
    [ -z "$what" ] || grep -qF -- "$what" "$CB_TMP/bad" || fail "schemas: not refused: $what: $(cat "$CB_TMP/bad")"
done || exit 1
[ "$(wc -l <"$CB_TMP/bad")" = "$((n + 1))" ] ||
    fail "schemas: expected $((n + 1)) refusals (the MPIJob's two templates), got: $(cat "$CB_TMP/bad")"
echo "ok"
