"""Live cluster input, read-only, without a cluster and without the ``kubernetes`` package.

A fake ``kubernetes`` package (and the ``urllib3`` errors it raises) is put in ``sys.modules``:
its API classes serve typed list pages (``PodList``...) as the API server's JSON, follow
``limit``/``_continue``, and record every call, so the tests can check that only list calls are
made and that the objects equal those of the same cluster saved with ``kubectl get -o json``.
One more test runs the real client against a local HTTP server when the extra is installed.
"""

from __future__ import annotations

import copy
import json
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import ModuleType
from typing import Any, ClassVar
from urllib.parse import parse_qs, urlparse

import pytest

from test_cli import run
from topospread.api.loader import load_manifests
from topospread.cluster import live
from topospread.errors import ClusterAccessError
from topospread.simulator.scenario import load_live_scenario, load_manifest_files

# ---------------------------------------------------------------------------------------------
# The cluster, as `kubectl get nodes,pods,services,...,poddisruptionbudgets -A -o json` prints it


def _node(name: str, zone: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": zone},
            "resourceVersion": "101",
            "managedFields": [{"manager": "kubelet", "operation": "Update"}],
        },
        "spec": {"podCIDR": "10.244.0.0/24"},
        "status": {
            "allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"},
            "capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"},
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def _pod(name: str, node: str | None, phase: str = "Running") -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [
            {
                "name": "web",
                "image": "nginx:1.27",
                "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}},
            }
        ],
        "priority": 0,
        "schedulerName": "default-scheduler",
        "topologySpreadConstraints": [
            {
                "maxSkew": 1,
                "topologyKey": "topology.kubernetes.io/zone",
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"app": "web"}},
            }
        ],
    }
    if node is not None:
        spec["nodeName"] = node
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "shop",
            "labels": {"app": "web", "pod-template-hash": "5d9f"},
            "creationTimestamp": "2026-11-24T10:00:00Z",
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "ReplicaSet",
                    "name": "web-5d9f",
                    "uid": "rs-uid",
                    "controller": True,
                }
            ],
        },
        "spec": spec,
        "status": {"phase": phase if node is not None else "Pending"},
    }


def _workload(kind: str, name: str, **metadata: str) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": kind,
        "metadata": {"name": name, "namespace": "shop", **metadata},
        "spec": {
            "replicas": 5,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]},
            },
        },
    }


CLUSTER: list[dict[str, Any]] = [
    _node("node-a1", "zone-a"),
    _node("node-a2", "zone-a"),
    _node("node-b1", "zone-b"),
    _pod("web-1", "node-a1"),
    _pod("web-2", "node-a2"),
    _pod("web-3", "node-b1", phase="Succeeded"),
    _pod("web-4", None),
    _pod("web-5", None),
    {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "web", "namespace": "shop"},
        "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]},
    },
    _workload("ReplicaSet", "web-5d9f", uid="rs-uid"),
    _workload("Deployment", "web"),
    {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": "shop", "labels": {"kubernetes.io/metadata.name": "shop"}},
    },
    {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": "batch-low"},
        "value": -10,
    },
    {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "web", "namespace": "shop"},
        "spec": {"minAvailable": 2, "selector": {"matchLabels": {"app": "web"}}},
    },
]

# Each resource's list method, with the API group of its items.
_LISTS = {r.method: (r.api, r.list_kind) for r in live.RESOURCES}


# ---------------------------------------------------------------------------------------------
# The fake kubernetes package


class FakeConfigException(Exception):
    pass


class FakeApiException(Exception):
    def __init__(self, status: int, reason: str, body: str | None = None) -> None:
        super().__init__(f"({status})\nReason: {reason}\n")
        self.status, self.reason, self.body = status, reason, body


class FakeHTTPError(Exception):
    pass


class FakeMaxRetryError(FakeHTTPError):
    def __init__(self, reason: Exception) -> None:
        super().__init__(
            "HTTPSConnectionPool(host='10.0.0.1', port=6443): Max retries exceeded with url: "
            f"/api/v1/nodes?limit=500 (Caused by {reason!r})"
        )
        self.reason = reason


class FakeResponse:
    def __init__(self, data: bytes) -> None:
        self.data = data


class FakeServer:
    """What the fake client talks to: the cluster's items per list method, and a call log."""

    CONTEXTS: ClassVar[dict[str, str]] = {
        "kind-dev": "https://127.0.0.1:6443",
        "prod": "https://10.0.0.1:6443",
    }
    CURRENT = "kind-dev"

    def __init__(self, items: list[dict[str, Any]]) -> None:
        self.calls: list[tuple[str, str, dict[str, Any]]] = []
        self.errors: dict[str, Exception] = {}
        self.lists: dict[str, list[dict[str, Any]]] = {method: [] for method in _LISTS}
        by_kind = {kind[: -len("List")]: method for method, (_, kind) in _LISTS.items()}
        for item in items:
            listed = copy.deepcopy(item)
            # The API server leaves apiVersion and kind out of list items; the list has them.
            del listed["apiVersion"], listed["kind"]
            self.lists[by_kind[item["kind"]]].append(listed)

    def page(self, method: str, kwargs: dict[str, Any]) -> FakeResponse:
        if method in self.errors:
            raise self.errors[method]
        assert kwargs.get("_preload_content") is False
        items = self.lists[method]
        start = int(kwargs.get("_continue") or 0)
        stop = start + int(kwargs["limit"])
        metadata: dict[str, Any] = {"resourceVersion": "12345"}
        if stop < len(items):
            metadata["continue"] = str(stop)
        api, list_kind = _LISTS[method]
        body = {
            "apiVersion": _API_VERSIONS[api],
            "kind": list_kind,
            "metadata": metadata,
            "items": items[start:stop],
        }
        return FakeResponse(json.dumps(body).encode())


_API_VERSIONS = {
    "CoreV1Api": "v1",
    "AppsV1Api": "apps/v1",
    "BatchV1Api": "batch/v1",
    "SchedulingV1Api": "scheduling.k8s.io/v1",
    "PolicyV1Api": "policy/v1",
}


def fake_kubernetes(server: FakeServer) -> dict[str, ModuleType]:
    """The modules `import kubernetes` and `import urllib3` would give, backed by ``server``."""

    class Configuration:
        def __init__(self, host: str) -> None:
            self.host = host

    class ApiClient:
        def __init__(self, context: str) -> None:
            self.configuration = Configuration(server.CONTEXTS[context])

        def close(self) -> None:
            server.calls.append(("ApiClient", "close", {}))

    def make_api(api_name: str) -> type:
        class Api:
            def __init__(self, api_client: ApiClient) -> None:
                assert isinstance(api_client, ApiClient)

            def __getattr__(self, method: str) -> Any:
                def call(*args: Any, **kwargs: Any) -> Any:
                    assert not args, "list calls take keyword arguments"
                    server.calls.append((api_name, method, kwargs))
                    if method not in _LISTS or _LISTS[method][0] != api_name:
                        raise AssertionError(f"{api_name}.{method} is not a list call")
                    return server.page(method, kwargs)

                return call

        Api.__name__ = api_name
        return Api

    def new_client_from_config(
        config_file: str | None = None, context: str | None = None, persist_config: bool = True
    ) -> ApiClient:
        server.calls.append(
            (
                "config",
                "new_client_from_config",
                {"config_file": config_file, "context": context, "persist_config": persist_config},
            )
        )
        name = context or server.CURRENT
        if name not in server.CONTEXTS:
            # The real client's message (kubernetes 37.0.2), path and all.
            raise FakeConfigException(
                "Invalid kube-config file. "
                f"Expected object with name {name} in {config_file}/contexts list"
            )
        return ApiClient(name)

    def list_kube_config_contexts(
        config_file: str | None = None,
    ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        server.calls.append(("config", "list_kube_config_contexts", {"config_file": config_file}))
        contexts = [{"name": n, "context": {"cluster": n}} for n in server.CONTEXTS]
        return contexts, contexts[0]

    kubernetes = ModuleType("kubernetes")
    client = ModuleType("kubernetes.client")
    rest = ModuleType("kubernetes.client.rest")
    config = ModuleType("kubernetes.config")
    urllib3 = ModuleType("urllib3")
    exceptions = ModuleType("urllib3.exceptions")
    client.ApiClient = ApiClient  # type: ignore[attr-defined]
    for api_name in _API_VERSIONS:
        setattr(client, api_name, make_api(api_name))
    rest.ApiException = FakeApiException  # type: ignore[attr-defined]
    client.rest = rest  # type: ignore[attr-defined]
    config.ConfigException = FakeConfigException  # type: ignore[attr-defined]
    config.new_client_from_config = new_client_from_config  # type: ignore[attr-defined]
    config.list_kube_config_contexts = list_kube_config_contexts  # type: ignore[attr-defined]
    kubernetes.client = client  # type: ignore[attr-defined]
    kubernetes.config = config  # type: ignore[attr-defined]
    exceptions.HTTPError = FakeHTTPError  # type: ignore[attr-defined]
    urllib3.exceptions = exceptions  # type: ignore[attr-defined]
    return {
        "kubernetes": kubernetes,
        "kubernetes.client": client,
        "kubernetes.client.rest": rest,
        "kubernetes.config": config,
        "urllib3": urllib3,
        "urllib3.exceptions": exceptions,
    }


@pytest.fixture
def kubeconfig(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A kubeconfig file (the fake client never reads it) named by $KUBECONFIG."""
    path = tmp_path / "kubeconfig"
    path.write_text("apiVersion: v1\nkind: Config\ncurrent-context: kind-dev\n")
    monkeypatch.setenv("KUBECONFIG", str(path))
    return path


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch, kubeconfig: Path) -> FakeServer:
    fake = FakeServer(CLUSTER)
    for name, module in fake_kubernetes(fake).items():
        monkeypatch.setitem(sys.modules, name, module)
    return fake


@pytest.fixture
def kubectl_file(tmp_path: Path) -> Path:
    path = tmp_path / "cluster.json"
    path.write_text(
        json.dumps({"apiVersion": "v1", "kind": "List", "metadata": {}, "items": CLUSTER})
    )
    return path


# ---------------------------------------------------------------------------------------------
# Reading


def test_only_list_calls_are_made_one_per_resource_across_all_namespaces(
    server: FakeServer,
) -> None:
    live.read_cluster(None, None)
    api_calls = [(api, method) for api, method, _ in server.calls if api.endswith("V1Api")]
    assert api_calls == [(r.api, r.method) for r in live.RESOURCES]
    assert all(method.startswith("list_") for _, method in api_calls)
    assert {r.name for r in live.RESOURCES} == {
        "nodes",
        "pods",
        "services",
        "replicationcontrollers",
        "replicasets",
        "statefulsets",
        "deployments",
        "daemonsets",
        "jobs",
        "namespaces",
        "priorityclasses",
        "poddisruptionbudgets",
    }


def test_the_kubeconfig_is_never_written_back(server: FakeServer) -> None:
    live.read_cluster(None, None)
    (connect,) = [kw for _, method, kw in server.calls if method == "new_client_from_config"]
    assert connect["persist_config"] is False


def test_the_client_is_closed_after_reading_even_when_a_list_fails(server: FakeServer) -> None:
    live.read_cluster(None, None)
    assert server.calls[-1] == ("ApiClient", "close", {})
    server.calls.clear()
    server.errors["list_job_for_all_namespaces"] = FakeApiException(500, "Internal Server Error")
    with pytest.raises(ClusterAccessError, match=r"list jobs: 500 Internal Server Error$"):
        live.read_cluster(None, None)
    assert server.calls[-1] == ("ApiClient", "close", {})


def test_pages_are_followed_with_the_continue_token(
    server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(live, "PAGE_SIZE", 2)
    objects = live.read_cluster(None, None).objects
    pod_calls = [kw for _, method, kw in server.calls if method == "list_pod_for_all_namespaces"]
    assert [(kw["limit"], kw["_continue"]) for kw in pod_calls] == [(2, None), (2, "2"), (2, "4")]
    pods = [o.metadata.name for o in objects if type(o).__name__ == "Pod"]
    assert pods == ["web-1", "web-2", "web-3", "web-4", "web-5"]


def test_objects_are_those_of_the_same_cluster_saved_with_kubectl_get_o_json(
    server: FakeServer, kubectl_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(live, "PAGE_SIZE", 2)
    read = live.read_cluster(None, None)
    from_file = load_manifests(kubectl_file)
    key = lambda o: (type(o).__name__, o.metadata.namespace, o.metadata.name)  # noqa: E731
    assert sorted(read.objects, key=key) == sorted(from_file, key=key)
    assert len(read.objects) == len(CLUSTER)


def test_the_current_context_is_used_unless_one_is_named(server: FakeServer) -> None:
    read = live.read_cluster(None, None)
    assert (read.context, read.server) == ("kind-dev", "https://127.0.0.1:6443")
    server.calls.clear()
    read = live.read_cluster(None, "prod")
    assert (read.context, read.server) == ("prod", "https://10.0.0.1:6443")
    (connect,) = [kw for _, method, kw in server.calls if method == "new_client_from_config"]
    assert connect["context"] == "prod"


def test_an_explicit_kubeconfig_wins_over_the_environment(
    server: FakeServer, tmp_path: Path
) -> None:
    other = tmp_path / "other-config"
    other.write_text("apiVersion: v1\nkind: Config\n")
    live.read_cluster(str(other), None)
    (connect,) = [kw for _, method, kw in server.calls if method == "new_client_from_config"]
    assert connect["config_file"] == str(other)


def test_without_kubeconfig_the_environment_then_the_home_default_is_read(
    server: FakeServer, kubeconfig: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    live.read_cluster(None, None)
    monkeypatch.delenv("KUBECONFIG")
    home = tmp_path / "home"
    (home / ".kube").mkdir(parents=True)
    (home / ".kube" / "config").write_text("apiVersion: v1\nkind: Config\n")
    monkeypatch.setenv("HOME", str(home))
    live.read_cluster(None, None)
    files = [kw["config_file"] for _, method, kw in server.calls if method.startswith("new_")]
    assert files == [str(kubeconfig), "~/.kube/config"]


# ---------------------------------------------------------------------------------------------
# Scheduling from a live cluster


def test_a_live_scenario_equals_the_one_from_kubectl_files(
    server: FakeServer, kubectl_file: Path
) -> None:
    from_cluster = load_live_scenario(None, None)
    from_file = load_manifest_files([kubectl_file])
    assert from_cluster.nodes == from_file.nodes
    assert from_cluster.pods == from_file.pods
    assert from_cluster.queue == from_file.queue
    assert [p.metadata.name for p in from_cluster.queue] == ["web-4", "web-5"]
    assert sorted(from_cluster.objects, key=repr) == sorted(from_file.objects, key=repr)


def test_schedule_live_prints_what_schedule_of_the_saved_file_prints(
    server: FakeServer, kubectl_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, from_cluster, _ = run(["schedule", "--live", "-o", "jsonl"], capsys)
    assert code == 0
    code, from_file, _ = run(["schedule", "--nodes", str(kubectl_file), "-o", "jsonl"], capsys)
    assert code == 0
    assert from_cluster == from_file
    placed = [json.loads(line) for line in from_cluster.splitlines()[1:]]
    assert [(p["pod"], p["node"] is not None) for p in placed] == [
        ("shop/web-4", True),
        ("shop/web-5", True),
    ]


def test_schedule_with_kubeconfig_and_context_reads_that_context(
    server: FakeServer, kubeconfig: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(["schedule", "--kubeconfig", str(kubeconfig), "--context", "prod"], capsys)
    assert code == 0
    assert "2 of 2 queued pods bound." in out
    (connect,) = [kw for _, method, kw in server.calls if method == "new_client_from_config"]
    assert (connect["config_file"], connect["context"]) == (str(kubeconfig), "prod")


def test_explain_reads_a_live_cluster_too(
    server: FakeServer, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(["explain", "--live", "--pod", "shop/web-4", "-o", "jsonl"], capsys)
    assert (code, err) == (0, "")
    assert json.loads(out)["pod"] == "shop/web-4"


def test_a_live_cluster_and_files_together_are_refused(
    server: FakeServer, kubectl_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(["schedule", "--live", "--nodes", str(kubectl_file)], capsys)
    assert code == 2
    assert err.startswith("topospread: error: give one input:")
    assert not [c for c in server.calls if c[0] != "config"]


@pytest.fixture
def outage(tmp_path: Path) -> Path:
    """A timeline with no cluster of its own: zone-a goes dark."""
    path = tmp_path / "outage.yaml"
    path.write_text(
        "timeline:\n- {name: zone-a goes dark, loseZone: zone-a}\n- {name: 5 minutes, wait: 5m}\n"
    )
    return path


def test_simulate_replays_a_timeline_on_a_live_cluster_as_on_its_saved_file(
    server: FakeServer, kubectl_file: Path, outage: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, from_cluster, _ = run(["simulate", str(outage), "--live", "-o", "json"], capsys)
    assert code == 0
    code, from_file, _ = run(
        ["simulate", str(outage), "--cluster", str(kubectl_file), "-o", "json"], capsys
    )
    assert code == 0
    assert from_cluster == from_file
    start, _, lost = json.loads(from_cluster)["steps"]
    # The cluster's bound pods keep their nodes; the Succeeded one is invisible, as it is to
    # kube-scheduler; the queued ones are placed.
    assert (start["bound"]["shop/web-1"], start["bound"]["shop/web-2"]) == ("node-a1", "node-a2")
    assert "shop/web-3" not in start["bound"] and "shop/web-3" not in start["pending"]
    assert {"shop/web-4", "shop/web-5"} <= set(start["placed"])
    # Then the outage evicts zone-a's pods after 5 minutes: nothing is left bound there.
    assert not {k for k, node in lost["bound"].items() if node in ("node-a1", "node-a2")}
    api_calls = [method for api, method, _ in server.calls if api.endswith("V1Api")]
    assert api_calls == [r.method for r in live.RESOURCES]  # one read, list calls only


def test_simulate_takes_its_cluster_from_files_or_live_not_both(
    server: FakeServer, kubectl_file: Path, outage: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["simulate", str(outage), "--live", "--cluster", str(kubectl_file)]
    code, _, err = run(argv, capsys)
    assert code == 2
    assert err == (
        "topospread: error: give the starting cluster either as --cluster files or live "
        "(--live, --kubeconfig, --context), not both\n"
    )


# ---------------------------------------------------------------------------------------------
# Errors: one line, exit code 2


def forbidden(resource: str, group: str) -> FakeApiException:
    """The API server's 403 for a list the user's RBAC roles do not allow."""
    qualified = f"{resource}.{group}" if group else resource
    message = (
        f'{qualified} is forbidden: User "dev" cannot list resource "{resource}" in API group '
        f'"{group}" at the cluster scope'
    )
    status = {"kind": "Status", "status": "Failure", "message": message, "reason": "Forbidden"}
    return FakeApiException(403, "Forbidden", json.dumps({**status, "code": 403}))


@pytest.mark.parametrize(
    ("method", "error", "message"),
    [
        pytest.param(
            "list_pod_for_all_namespaces",
            forbidden("pods", ""),
            'cluster "kind-dev" (https://127.0.0.1:6443): list pods: '
            '403 Forbidden: pods is forbidden: User "dev" cannot list '
            'resource "pods" in API group "" at the cluster scope',
            id="forbidden names the resource and quotes the API server",
        ),
        pytest.param(
            "list_node",
            FakeApiException(401, "Unauthorized", '{"kind":"Status","message":"Unauthorized"}'),
            'cluster "kind-dev" (https://127.0.0.1:6443): list nodes: 401 Unauthorized: '
            "Unauthorized",
            id="unauthorized",
        ),
        pytest.param(
            "list_job_for_all_namespaces",
            FakeApiException(503, "Service Unavailable", "upstream connect error\n"),
            'cluster "kind-dev" (https://127.0.0.1:6443): list jobs: 503 Service Unavailable: '
            "upstream connect error",
            id="a body that is not a Status is quoted on one line",
        ),
        pytest.param(
            "list_node",
            FakeMaxRetryError(
                ConnectionRefusedError(
                    "<urllib3.connection.HTTPSConnection object at 0x7f3a2c1d0>: Failed to "
                    "establish a new connection: [Errno 111] Connection refused"
                )
            ),
            'cluster "kind-dev" (https://127.0.0.1:6443): list nodes: cannot reach the API '
            "server: Connection refused",
            id="connection refused",
        ),
        pytest.param(
            "list_node",
            FakeApiException(
                0,
                "SSLError\nHTTPSConnectionPool(host='127.0.0.1', port=6443): Max retries "
                "exceeded with url: /api/v1/nodes?limit=500 (Caused by SSLError("
                "SSLCertVerificationError(1, '[SSL: CERTIFICATE_VERIFY_FAILED] certificate "
                "verify failed: self-signed certificate (_ssl.c:1000)')))",
            ),
            'cluster "kind-dev" (https://127.0.0.1:6443): list nodes: cannot reach the API '
            "server: certificate verify failed: self-signed certificate",
            id="a TLS failure",
        ),
    ],
)
def test_api_and_network_errors_exit_2_with_one_line(
    server: FakeServer,
    capsys: pytest.CaptureFixture[str],
    method: str,
    error: Exception,
    message: str,
) -> None:
    server.errors[method] = error
    code, out, err = run(["schedule", "--live"], capsys)
    assert (code, out) == (2, "")
    assert err == f"topospread: error: {message}\n"


def test_an_unknown_context_exits_2_naming_it(
    server: FakeServer, kubeconfig: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(["schedule", "--context", "staging"], capsys)
    assert code == 2
    assert err == f'topospread: error: kubeconfig {kubeconfig}: context "staging" does not exist\n'


def test_a_kubeconfig_error_is_reported_as_the_client_words_it_on_one_line(
    server: FakeServer, kubeconfig: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def broken(**_: Any) -> Any:
        raise FakeConfigException("Invalid kube-config file.\nExpected key current-context")

    sys.modules["kubernetes.config"].new_client_from_config = broken  # type: ignore[attr-defined]
    code, _, err = run(["schedule", "--live"], capsys)
    assert code == 2
    assert err == (
        f"topospread: error: kubeconfig {kubeconfig}: no current-context is set: "
        "choose a context with --context NAME\n"
    )


def test_a_missing_kubeconfig_file_exits_2(
    server: FakeServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nope"
    code, _, err = run(["schedule", "--kubeconfig", str(missing)], capsys)
    assert code == 2
    assert err == f"topospread: error: --kubeconfig {missing}: no such file\n"
    assert server.calls == []


def test_no_default_kubeconfig_exits_2_saying_how_to_name_one(
    server: FakeServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.delenv("KUBECONFIG")
    monkeypatch.setenv("HOME", str(tmp_path / "empty-home"))
    code, _, err = run(["schedule", "--live"], capsys)
    assert code == 2
    assert err == (
        "topospread: error: no kubeconfig found (~/.kube/config does not exist): "
        "name one with --kubeconfig PATH, or set KUBECONFIG\n"
    )


def test_a_response_that_is_not_the_expected_list_exits_2(
    server: FakeServer, capsys: pytest.CaptureFixture[str]
) -> None:
    server.lists["list_node"] = []
    original = server.page

    def html(method: str, kwargs: dict[str, Any]) -> FakeResponse:
        if method == "list_node":
            return FakeResponse(b"<html>proxy login</html>")
        return original(method, kwargs)

    server.page = html  # type: ignore[method-assign]
    code, _, err = run(["schedule", "--live"], capsys)
    assert code == 2
    assert err.startswith(
        'topospread: error: cluster "kind-dev" (https://127.0.0.1:6443): list nodes: '
        "the response is not a NodeList (JSON): "
    )
    assert err.count("\n") == 1


def test_an_invalid_object_in_the_cluster_names_the_cluster_and_the_object(
    server: FakeServer, capsys: pytest.CaptureFixture[str]
) -> None:
    server.lists["list_pod_for_all_namespaces"][1]["spec"]["priority"] = "high"
    code, _, err = run(["schedule", "--live"], capsys)
    assert code == 2
    assert err == (
        'topospread: error: cluster "kind-dev" (https://127.0.0.1:6443): pods: items[1] '
        '(Pod shop/web-2): spec.priority: expected an integer, got "high"\n'
    )


def test_a_pod_on_a_node_the_cluster_no_longer_has_names_the_cluster_and_the_pod(
    server: FakeServer, capsys: pytest.CaptureFixture[str]
) -> None:
    server.lists["list_pod_for_all_namespaces"][0]["spec"]["nodeName"] = "node-gone"
    code, _, err = run(["schedule", "--live"], capsys)
    assert code == 2
    assert err == (
        'topospread: error: cluster "kind-dev" (https://127.0.0.1:6443) (Pod shop/web-1): '
        'spec.nodeName: Not found: "node-gone": no such node\n'
    )


def test_without_the_kubernetes_package_the_message_says_how_to_install_it(
    kubeconfig: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "kubernetes", None)  # `import kubernetes` fails
    with pytest.raises(ClusterAccessError, match=r"pip install 'topospread\[live\]'"):
        live.read_cluster(None, None)
    code, _, err = run(["schedule", "--live"], capsys)
    assert code == 2
    assert err == (
        "topospread: error: reading a live cluster needs the Kubernetes Python client: "
        "install the live extra: pip install 'topospread[live]'\n"
    )


def test_only_the_live_module_imports_a_kubernetes_client() -> None:
    source = Path(live.__file__).resolve().parents[1]
    importers = sorted(
        str(path.relative_to(source))
        for path in source.rglob("*.py")
        if "from kubernetes" in path.read_text() or "import kubernetes" in path.read_text()
    )
    assert importers == ["cluster/live.py"]


# ---------------------------------------------------------------------------------------------
# The real client, when the extra is installed, against a local API server stand-in


class _ApiHandler(BaseHTTPRequestHandler):
    pages: dict[str, list[dict[str, Any]]]
    requests: list[tuple[str, str]]
    forbidden: set[str]

    def do_GET(self) -> None:
        url = urlparse(self.path)
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        self.requests.append((self.command, self.path))
        items = self.pages.get(url.path)
        if url.path in self.forbidden:
            message = f"{url.path.rpartition('/')[2]} is forbidden"
            self._send(403, {"kind": "Status", "message": message, "code": 403})
            return
        if items is None:
            self._send(404, {"kind": "Status", "message": f"{url.path} not found", "code": 404})
            return
        start = int(query.get("continue", "0"))
        stop = start + int(query["limit"])
        group, _, resource = url.path.rpartition("/")
        kind = _KINDS[resource]
        body = {
            "apiVersion": group.removeprefix("/apis/").removeprefix("/api/"),
            "kind": f"{kind}List",
            "metadata": {"continue": str(stop)} if stop < len(items) else {},
            "items": items[start:stop],
        }
        self._send(200, body)

    def _send(self, code: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        pass


_KINDS = {
    "nodes": "Node",
    "pods": "Pod",
    "services": "Service",
    "replicationcontrollers": "ReplicationController",
    "replicasets": "ReplicaSet",
    "statefulsets": "StatefulSet",
    "deployments": "Deployment",
    "daemonsets": "DaemonSet",
    "jobs": "Job",
    "namespaces": "Namespace",
    "priorityclasses": "PriorityClass",
    "poddisruptionbudgets": "PodDisruptionBudget",
}


@pytest.fixture
def local_api() -> Iterator[tuple[str, type[_ApiHandler]]]:
    paths = {
        "Node": "/api/v1/nodes",
        "Pod": "/api/v1/pods",
        "Service": "/api/v1/services",
        "ReplicaSet": "/apis/apps/v1/replicasets",
        "Deployment": "/apis/apps/v1/deployments",
        "Namespace": "/api/v1/namespaces",
        "PriorityClass": "/apis/scheduling.k8s.io/v1/priorityclasses",
        "PodDisruptionBudget": "/apis/policy/v1/poddisruptionbudgets",
    }
    pages: dict[str, list[dict[str, Any]]] = {
        "/api/v1/replicationcontrollers": [],
        "/apis/apps/v1/statefulsets": [],
        "/apis/apps/v1/daemonsets": [],
        "/apis/batch/v1/jobs": [],
    }
    for item in CLUSTER:
        listed = {k: v for k, v in item.items() if k not in ("apiVersion", "kind")}
        pages.setdefault(paths[item["kind"]], []).append(listed)
    handler = type("Handler", (_ApiHandler,), {"pages": pages, "requests": [], "forbidden": set()})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", handler
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_the_real_client_reads_a_local_api_server_with_get_requests_only(
    local_api: tuple[str, type[_ApiHandler]],
    tmp_path: Path,
    kubectl_file: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pytest.importorskip("kubernetes", reason="the live extra is not installed")
    url, handler = local_api
    config = tmp_path / "real-kubeconfig"
    config.write_text(
        json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "local", "cluster": {"server": url}}],
                "users": [{"name": "me", "user": {"token": "t"}}],
                "contexts": [{"name": "local", "context": {"cluster": "local", "user": "me"}}],
                "current-context": "local",
            }
        )
    )
    monkeypatch.setattr(live, "PAGE_SIZE", 2)
    read = live.read_cluster(str(config), None)
    assert (read.context, read.server) == ("local", url)
    key = lambda o: (type(o).__name__, o.metadata.namespace, o.metadata.name)  # noqa: E731
    assert sorted(read.objects, key=key) == sorted(load_manifests(kubectl_file), key=key)
    assert {method for method, _ in handler.requests} == {"GET"}
    pod_pages = sorted(path for _, path in handler.requests if path.startswith("/api/v1/pods?"))
    assert [sorted(urlparse(p).query.split("&")) for p in pod_pages] == [
        ["continue=2", "limit=2"],
        ["continue=4", "limit=2"],
        ["limit=2"],
    ]
    with pytest.raises(ClusterAccessError, match='context "nope" does not exist'):
        live.read_cluster(str(config), "nope")
    handler.forbidden.add("/apis/policy/v1/poddisruptionbudgets")
    with pytest.raises(ClusterAccessError) as forbidden:
        live.read_cluster(str(config), None)
    assert str(forbidden.value) == (
        f'cluster "local" ({url}): list poddisruptionbudgets: 403 Forbidden: '
        "poddisruptionbudgets is forbidden"
    )


def test_an_optional_resource_the_user_may_not_list_is_left_out_with_a_warning(
    server: FakeServer, kubectl_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A read-only role often lacks poddisruptionbudgets or priorityclasses: the read goes on.
    server.errors["list_pod_disruption_budget_for_all_namespaces"] = forbidden(
        "poddisruptionbudgets", "policy"
    )
    server.errors["list_priority_class"] = FakeApiException(
        404,
        "Not Found",
        '{"kind":"Status","message":"the server could not find the requested resource","code":404}',
    )
    code, out, err = run(["schedule", "--live", "-o", "jsonl"], capsys)
    assert code == 0
    assert err.splitlines()[:2] == [
        'topospread: warning: cluster "kind-dev" (https://127.0.0.1:6443): list priorityclasses: '
        "404 Not Found: the server could not find the requested resource; read on without "
        "priorityclasses: a pod's priority is its spec.priority as the API server admitted it",
        'topospread: warning: cluster "kind-dev" (https://127.0.0.1:6443): list '
        "poddisruptionbudgets: 403 Forbidden: poddisruptionbudgets.policy is forbidden: User "
        '"dev" cannot list resource "poddisruptionbudgets" in API group "policy" at the cluster '
        "scope; read on without poddisruptionbudgets: preemption and drain see no disruption "
        "budget",
    ]
    _, from_file, _ = run(["schedule", "--nodes", str(kubectl_file), "-o", "jsonl"], capsys)
    assert out == from_file  # this cluster has neither kind


def test_the_objects_read_before_and_after_a_left_out_resource_are_all_there(
    server: FakeServer, kubectl_file: Path
) -> None:
    server.errors["list_service_for_all_namespaces"] = forbidden("services", "")
    found = live.read_cluster(None, None)
    (warning,) = found.warnings
    assert warning.endswith(
        "read on without services: default topology spreading derives no selector from them"
    )
    from_file = load_manifests(kubectl_file)
    assert sorted(map(repr, found.objects)) == sorted(
        repr(o) for o in from_file if type(o).__name__ != "Service"
    )


@pytest.mark.parametrize(
    "method", ["list_node", "list_pod_for_all_namespaces"], ids=["nodes", "pods"]
)
def test_nodes_and_pods_are_never_left_out(
    server: FakeServer, capsys: pytest.CaptureFixture[str], method: str
) -> None:
    resource = "nodes" if method == "list_node" else "pods"
    server.errors[method] = forbidden(resource, "")
    code, out, err = run(["schedule", "--live"], capsys)
    assert (code, out) == (2, "")
    assert f"list {resource}: 403 Forbidden" in err and "warning" not in err
