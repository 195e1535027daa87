"""The deployment files in infra/ agree with each other and with the package: one image name per variant, every
job-template placeholder declared, multi-node counts consistent, the Dask workers single-threaded."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from tests.shipped_text import REPO_ROOT

INFRA = REPO_ROOT / "infra"
IMAGES = {"pretrain-worker:cpu", "pretrain-worker:cuda"}
PLACEHOLDER = re.compile(r"\{\{\s*([a-z_]+)\s*\}\}")


def _yaml_documents(path: Path) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")) if doc]


def _images(node: Any) -> set[str]:
    if isinstance(node, dict):
        found = {node["image"]} if isinstance(node.get("image"), str) else set()
        return found.union(*(_images(v) for v in node.values()))
    if isinstance(node, list):
        return set().union(*(_images(v) for v in node))
    return set()


@pytest.mark.parametrize("name", ["cpu", "gpu"])
def test_job_template_declares_every_placeholder_and_its_defaults_are_valid(name: str) -> None:
    template = json.loads((INFRA / f"k8s/pretrain-{name}-job-template.json").read_text(encoding="utf-8"))
    variables = template["variables"]
    used = set(PLACEHOLDER.findall(json.dumps(template["job_configuration"])))
    assert used <= set(variables["properties"]), used - set(variables["properties"])
    defaults = {k: v["default"] for k, v in variables["properties"].items() if "default" in v}
    jsonschema.validate(defaults, variables)
    assert defaults["image"] == ("pretrain-worker:cpu" if name == "cpu" else "pretrain-worker:cuda")
    assert defaults["backoff_limit"] == 0  # Prefect retries the flow run; Kubernetes must not start a second one


def test_gpu_job_template_requests_gpus_and_shared_memory() -> None:
    template = json.loads((INFRA / "k8s/pretrain-gpu-job-template.json").read_text(encoding="utf-8"))
    pod = template["job_configuration"]["job_manifest"]["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert container["resources"]["limits"]["nvidia.com/gpu"] == "{{ gpus }}"
    assert {"name": "dshm", "mountPath": "/dev/shm"} in container["volumeMounts"]
    assert pod["terminationGracePeriodSeconds"] == "{{ termination_grace_seconds }}"


def test_multinode_job_counts_agree() -> None:
    service, job = _yaml_documents(INFRA / "k8s/train-multinode.yaml")
    spec = job["spec"]
    (container,) = spec["template"]["spec"]["containers"]
    env = {e["name"]: e["value"] for e in container["env"]}
    assert spec["completionMode"] == "Indexed"
    assert spec["completions"] == spec["parallelism"] == int(env["NNODES"])
    assert int(env["NPROC_PER_NODE"]) == container["resources"]["limits"]["nvidia.com/gpu"]
    job_name, service_name = job["metadata"]["name"], service["metadata"]["name"]
    assert service["spec"]["clusterIP"] == "None" and spec["template"]["spec"]["subdomain"] == service_name
    assert env["RDZV_ENDPOINT"] == f"{job_name}-0.{service_name}:{service['spec']['ports'][0]['port']}"
    assert (REPO_ROOT / container["command"][0]).is_file()


def test_dask_workers_are_single_threaded_processes_and_every_pod_speaks_tls() -> None:
    (cluster,) = _yaml_documents(INFRA / "dask/daskcluster.yaml")
    (worker,) = cluster["spec"]["worker"]["spec"]["containers"]
    args = worker["args"]
    assert args[:3] == ["dask", "worker", "tls://pretrain-dask-scheduler:8786"]
    assert args[args.index("--nthreads") + 1] == "1"
    (scheduler,) = cluster["spec"]["scheduler"]["spec"]["containers"]
    assert scheduler["args"][:4] == ["dask", "scheduler", "--port", "8786"]
    assert scheduler["args"][scheduler["args"].index("--protocol") + 1] == "tls"
    for role, container in (("worker", worker), ("scheduler", scheduler)):
        (volume,) = cluster["spec"][role]["spec"]["volumes"]
        assert volume["secret"]["secretName"] == "pretrain-dask-tls"
        mounted = container["volumeMounts"][0]["mountPath"]
        assert all(container["args"][container["args"].index(flag) + 1].startswith(mounted) for flag in
                   ("--tls-ca-file", "--tls-cert", "--tls-key"))  # fmt: skip


def test_every_manifest_uses_an_image_the_dockerfile_builds() -> None:
    dockerfile = (INFRA / "docker/Dockerfile").read_text(encoding="utf-8")
    assert all(f"-t {image}" in dockerfile for image in IMAGES)
    used: set[str] = set()
    for path in [*INFRA.glob("k8s/*.yaml"), *INFRA.glob("dask/*.yaml")]:
        used |= set().union(*(_images(doc) for doc in _yaml_documents(path)))
    for path in INFRA.glob("k8s/*.json"):
        used.add(json.loads(path.read_text(encoding="utf-8"))["variables"]["properties"]["image"]["default"])
    assert used == IMAGES


def test_dockerfile_installs_the_pinned_versions_with_the_kubernetes_and_export_extras() -> None:
    dockerfile = (INFRA / "docker/Dockerfile").read_text(encoding="utf-8")
    extras = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "optional-dependencies"
    ]
    assert "k8s" in extras
    installs = [line for line in dockerfile.splitlines() if "pip install" in line]
    assert "export" in extras  # the images export ONNX too
    assert installs and all("-c constraints.txt" in line and '".[k8s,export]"' in line for line in installs)
    pinned = (REPO_ROOT / "constraints.txt").read_text(encoding="utf-8")
    assert re.search(r"^prefect-kubernetes==", pinned, re.MULTILINE)
