"""deploy_schemas.py FILE...: validate every document of the Kubernetes
manifests FILE... against the published Kubernetes JSON schemas of
Kubernetes 1.31 (K8S_VERSION), strictly: an unknown field is refused where
the schema closes the object (additionalProperties false), as
kubernetes-validate --strict does. The schemas are the ones PyPI's
kubernetes-validate bundles (openapi2jsonschema's conversion of the API's
OpenAPI); run this with the Python of a venv that has it (CB_K8S_VALIDATE,
by default /opt/nccl-collbench-k8s/bin/python, which ci/install-deps.sh
makes).

Kinds with a published schema (Service, NetworkPolicy, PersistentVolumeClaim,
Job, Secret, ConfigMap, ...) are validated whole. The custom resources have
none there, so their embedded Kubernetes objects are validated instead:
an MPIJob's (kubeflow.org/v2beta1) spec.mpiReplicaSpecs.ROLE.template as a
PodTemplateSpec (inside a PodTemplate), a JobSet's (jobset.x-k8s.io/v1alpha2)
spec.replicatedJobs[].template.spec as a JobSpec (inside a Job), which holds
the pod template. Their own fields (slotsPerWorker, replicas, network, ...)
are checked by deploy_manifests.py, not by a schema.

Prints one line per document (FILE KIND NAME: ...) and exits 0, or prints
the failures (FILE KIND NAME: schema at PATH: what) and exits 1; exits 2
on a usage error or a missing validator."""

import sys

K8S_VERSION = "1.31"

try:
    import yaml
    from kubernetes_validate import utils
except ImportError as e:
    print(f"deploy_schemas.py: {e}: run it with the Python of a venv holding "
          "kubernetes-validate (ci/install-deps.sh)", file=sys.stderr)
    sys.exit(2)


def embedded(doc):
    """(what, object, path prefix) for the Kubernetes objects to validate in
    doc: itself where its kind has a schema, the templates of a custom
    resource otherwise."""
    kind, name = doc.get("kind"), (doc.get("metadata") or {}).get("name")
    spec = doc.get("spec") or {}
    if kind == "MPIJob" and str(doc.get("apiVersion", "")).startswith("kubeflow.org/"):
        for role, rs in sorted((spec.get("mpiReplicaSpecs") or {}).items()):
            yield (f"{role} template as a PodTemplateSpec",
                   {"apiVersion": "v1", "kind": "PodTemplate",
                    "metadata": {"name": f"{name}-{role.lower()}"},
                    "template": (rs or {}).get("template")},
                   {"template": f"spec.mpiReplicaSpecs.{role}.template"})
    elif kind == "JobSet" and str(doc.get("apiVersion", "")).startswith("jobset.x-k8s.io/"):
        for i, rj in enumerate(spec.get("replicatedJobs") or []):
            tmpl = (rj or {}).get("template") or {}
            yield (f"replicatedJobs[{i}] ({(rj or {}).get('name')}) template as a JobSpec",
                   {"apiVersion": "batch/v1", "kind": "Job",
                    "metadata": dict(tmpl.get("metadata") or {}, name=f"{name}-{rj.get('name')}"),
                    "spec": tmpl.get("spec")},
                   {"spec": f"spec.replicatedJobs[{i}].template.spec",
                    "metadata": f"spec.replicatedJobs[{i}].template.metadata"})
    else:
        yield None, doc, {}


def where_in(path, prefixes):
    """A schema error's path in the original document."""
    parts = [str(p) for p in path]
    if parts and parts[0] in prefixes:
        parts[0] = prefixes[parts[0]]
    return ".".join(parts) or "(the document)"


def main():
    if len(sys.argv) < 2:
        print("usage: deploy_schemas.py FILE...", file=sys.stderr)
        return 2
    if K8S_VERSION not in [utils.major_minor(v) for v in utils.all_versions()]:
        print(f"deploy_schemas.py: kubernetes-validate has no schemas of Kubernetes {K8S_VERSION} "
              f"(it has {utils.all_versions()[0]} to {utils.latest_version()})", file=sys.stderr)
        return 2
    ok, bad = [], []
    for path in sys.argv[1:]:
        try:
            with open(path, encoding="utf-8") as f:
                docs = [d for d in yaml.safe_load_all(f) if d is not None]
        except (OSError, yaml.YAMLError) as e:
            bad.append(f"{path}: not read as YAML: {e}")
            continue
        for doc in docs:
            if not isinstance(doc, dict) or "kind" not in doc or "apiVersion" not in doc:
                bad.append(f"{path}: a document without kind or apiVersion: {str(doc)[:80]}")
                continue
            label = f"{path} {doc['kind']} {(doc.get('metadata') or {}).get('name')}"
            parts = list(embedded(doc))
            if not parts:
                bad.append(f"{label}: no template to validate in this custom resource")
            for what, obj, prefixes in parts:
                try:
                    utils.validate(obj, K8S_VERSION, strict=True)
                except utils.ValidationError as e:
                    bad.append(f"{label}: schema at {where_in(e.path, prefixes)}: {e.message}")
                    continue
                except utils.SchemaNotFoundError as e:
                    bad.append(f"{label}: no published schema for {doc['apiVersion']} "
                               f"{doc['kind']} in Kubernetes {K8S_VERSION}, and it is not a "
                               f"custom resource whose templates this knows ({e.message})")
                    continue
                ok.append(f"{label}: {what + ' ' if what else ''}valid against Kubernetes "
                          f"{K8S_VERSION}'s schema (strict)")
    print("\n".join(bad or ok))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
