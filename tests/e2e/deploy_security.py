"""What a cluster's security review asks of the manifests (issue 44), for
deploy_manifests.py: per pod template, CPU and memory requests and limits
on every container, no service account token, images by tag and digest
(never "latest"), a NetworkPolicy that admits to the pods only the job's
own pods, the key from a Secret with --require-key where the ranks meet
over TCP, and IPC_LOCK and root said with the Pod Security level they need.

Then each document's required fields, by hand (check_shape): a structural
check that needs nothing but PyYAML. The published Kubernetes JSON schemas
are deploy_schemas.py's, run with the Python of a venv holding
kubernetes-validate (deploy_manifests.sh runs both)."""

import re

# name[:tag]@sha256:64 hex; the tag must be there and not be "latest".
IMAGE_RE = re.compile(r"(?P<name>[^@:]+(?::\d+/[^@:]+)?):(?P<tag>[\w][\w.-]{0,127})"
                      r"@sha256:(?P<digest>[0-9a-f]{64})")


def match_labels(selector):
    return (selector or {}).get("matchLabels") or {}


def selects(selector, labels):
    want = match_labels(selector)
    return bool(want) and all(labels.get(k) == v for k, v in want.items())


def check_image(c, where, image):
    m = IMAGE_RE.fullmatch(image or "")
    if m is None:
        c.bad(where, f"image {image!r} is not named by tag and digest (NAME:TAG@sha256:DIGEST)")
    elif m.group("tag") == "latest":
        c.bad(where, f"image {image!r} is tagged latest: name a version")
    else:
        c.ok(f"{where}: image by tag {m.group('tag')} and digest")


def check_pod_security(c, where, pod, labels, docs, raw, tcp_key):
    """One pod template's spec (pod) with its labels; raw is the file's text
    (its comments say what YAML drops); tcp_key: the ranks meet over the
    TCP rendezvous, so the key must come from a Secret with --require-key."""
    if pod.get("automountServiceAccountToken") is not False:
        c.bad(where, "automountServiceAccountToken is not false: the pod would hold an API token "
                     "it never uses")
    for ctr in (pod.get("containers") or []) + (pod.get("initContainers") or []):
        cw = f"{where} container {ctr.get('name')}"
        check_image(c, cw, ctr.get("image"))
        res = ctr.get("resources") or {}
        for part in ("requests", "limits"):
            for what in ("cpu", "memory"):
                if ((res.get(part) or {}).get(what)) in (None, ""):
                    c.bad(cw, f"no {what} in resources.{part}")
        sc = ctr.get("securityContext") or {}
        if sc.get("privileged"):
            c.bad(cw, "privileged: true: IPC_LOCK is all the pods need")
        caps = (sc.get("capabilities") or {}).get("add") or []
        if "IPC_LOCK" in caps:
            if sc.get("runAsUser") != 0 and (pod.get("securityContext") or {}).get("runAsUser") != 0:
                c.bad(cw, "adds IPC_LOCK but does not say it runs as root (runAsUser: 0): a "
                          "non-root process gets no added capability")
            if not re.search(r"\"privileged\" Pod Security level", raw) or \
                    "IPC_LOCK, which the \"baseline\" level refuses" not in re.sub(r"\n#\s*", " ", raw):
                c.bad(cw, "adds IPC_LOCK without saying that it needs the \"privileged\" Pod "
                          "Security level (\"baseline\" refuses IPC_LOCK)")
    policies = [d for d in docs if d.get("kind") == "NetworkPolicy" and
                selects((d.get("spec") or {}).get("podSelector"), labels)]
    if not policies:
        c.bad(where, f"no NetworkPolicy in this file selects the pods (labels {labels})")
    for d in policies:
        spec = d.get("spec") or {}
        pw = f"{where}: NetworkPolicy {d['metadata'].get('name')}"
        if "Ingress" not in (spec.get("policyTypes") or []):
            c.bad(pw, "its policyTypes lack Ingress: it admits everyone")
        for rule in spec.get("ingress") or []:
            peers = rule.get("from")
            if not peers:
                c.bad(pw, "an ingress rule with no 'from' admits every source")
            for peer in peers or []:
                if set(peer) != {"podSelector"} or not selects(peer["podSelector"], labels):
                    c.bad(pw, f"admits {peer}, not the job's own pods alone")
        if not c.problems or not any(p.startswith(pw) for p in c.problems):
            c.ok(f"{pw}: admits the job's own pods alone")
    if tcp_key:
        ctr = (pod.get("containers") or [{}])[0]
        argv = [str(a) for a in (ctr.get("command") or []) + (ctr.get("args") or [])]
        if "--require-key" not in argv:
            c.bad(where, "the command lacks --require-key: a run without the key would start "
                         "unauthenticated")
        env = {e.get("name"): e for e in ctr.get("env") or []}
        key = (env.get("NCCL_COLLBENCH_KEY") or {}).get("valueFrom") or {}
        if "secretKeyRef" not in key:
            c.bad(where, "NCCL_COLLBENCH_KEY does not come from a Secret")
        else:
            c.ok(f"{where}: the key from Secret {key['secretKeyRef'].get('name')} with --require-key")


# Required fields by kind, as the API's OpenAPI marks them (and what our
# kinds need to mean anything): paths of dict keys, "[]" for each element.
REQUIRED = {
    "Service": ["spec.ports[].port"],
    "PersistentVolumeClaim": ["spec.accessModes", "spec.resources.requests.storage"],
    "NetworkPolicy": ["spec.podSelector"],
    "Job": ["spec.template.spec.containers[].name", "spec.template.spec.containers[].image"],
    "JobSet": ["spec.replicatedJobs[].name",
               "spec.replicatedJobs[].template.spec.template.spec.containers[].name",
               "spec.replicatedJobs[].template.spec.template.spec.containers[].image"],
    "MPIJob": ["spec.mpiReplicaSpecs.Launcher.template.spec.containers[].image",
               "spec.mpiReplicaSpecs.Worker.template.spec.containers[].image"],
}


def missing(doc, path):
    """The first place path is absent in doc, or None."""
    head, _, rest = path.partition(".")
    each = head.endswith("[]")
    key = head[:-2] if each else head
    if not isinstance(doc, dict) or doc.get(key) in (None, "", [], {}):
        return key
    if each:
        if not isinstance(doc[key], list):
            return f"{key} (not a list)"
        for i, item in enumerate(doc[key]):
            m = rest and missing(item, rest)
            if m:
                return f"{key}[{i}].{m}"
        return None
    return missing(doc[key], rest) if rest else None


def check_shape(c, where, doc):
    kind = doc.get("kind")
    for path in REQUIRED.get(kind, []):
        m = missing(doc, path)
        if m:
            c.bad(where, f"required field {path} is missing (at {m})")
