"""Live cluster input: the cluster the tests read, and a stand-in for the ``kubernetes`` package.

The live read is tested through the official client against a local HTTPS API server in
``test_live_client.py``. What stays here: ``CLUSTER``, as ``kubectl get ... -A -o json`` prints
it, shared by those tests; and a fake ``kubernetes`` package (with the ``urllib3`` errors it
raises) put in ``sys.modules``, whose API classes serve typed list pages and record every call.
The stand-in shows what a server cannot: the arguments the client is called with (the kubeconfig
never written back), that it is closed, a credential plugin failing mid-read, and the message
when the package is not installed. ``test_kubectl.py`` runs the kubectl plugin on it too.
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any, ClassVar

import pytest

from test_cli import run
from topospread.cluster import live
from topospread.errors import ClusterAccessError

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


class FakeConnectTimeoutError(FakeHTTPError):
    pass


class FakeNewConnectionError(FakeConnectTimeoutError):  # as in urllib3
    pass


class FakeReadTimeoutError(FakeHTTPError):
    pass


class FakeInsecureRequestWarning(Warning):
    pass


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
        stop = start + int(kwargs["limit"] or len(items))
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
    "StorageV1Api": "storage.k8s.io/v1",
}


def fake_kubernetes(server: FakeServer) -> dict[str, ModuleType]:
    """The modules `import kubernetes` and `import urllib3` would give, backed by ``server``."""

    class Configuration:
        def __init__(self) -> None:
            self.host = "http://localhost"
            self.retries: Any = None

    class ApiClient:
        def __init__(self, configuration: Configuration) -> None:
            self.configuration = configuration

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
        config_file: str | None = None,
        context: str | None = None,
        persist_config: bool = True,
        client_configuration: Configuration | None = None,
    ) -> ApiClient:
        configuration = client_configuration or Configuration()
        server.calls.append(
            (
                "config",
                "new_client_from_config",
                {
                    "config_file": config_file,
                    "context": context,
                    "persist_config": persist_config,
                    "retries": configuration.retries,
                },
            )
        )
        name = context or server.CURRENT
        if name not in server.CONTEXTS:
            # The real client's message (kubernetes 37.0.2), path and all.
            raise FakeConfigException(
                "Invalid kube-config file. "
                f"Expected object with name {name} in {config_file}/contexts list"
            )
        configuration.host = server.CONTEXTS[name]
        return ApiClient(configuration)

    def list_kube_config_contexts(
        config_file: str | None = None,
    ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        server.calls.append(("config", "list_kube_config_contexts", {"config_file": config_file}))
        contexts = [{"name": n, "context": {"cluster": n}} for n in server.CONTEXTS]
        return contexts, contexts[0]

    kubernetes = ModuleType("kubernetes")
    client = ModuleType("kubernetes.client")
    client_exceptions = ModuleType("kubernetes.client.exceptions")
    config = ModuleType("kubernetes.config")
    urllib3 = ModuleType("urllib3")
    exceptions = ModuleType("urllib3.exceptions")
    client.ApiClient = ApiClient  # type: ignore[attr-defined]
    client.Configuration = Configuration  # type: ignore[attr-defined]
    for api_name in _API_VERSIONS:
        setattr(client, api_name, make_api(api_name))
    client_exceptions.ApiException = FakeApiException  # type: ignore[attr-defined]
    client.exceptions = client_exceptions  # type: ignore[attr-defined]
    config.ConfigException = FakeConfigException  # type: ignore[attr-defined]
    config.new_client_from_config = new_client_from_config  # type: ignore[attr-defined]
    config.list_kube_config_contexts = list_kube_config_contexts  # type: ignore[attr-defined]
    kubernetes.client = client  # type: ignore[attr-defined]
    kubernetes.config = config  # type: ignore[attr-defined]
    exceptions.HTTPError = FakeHTTPError  # type: ignore[attr-defined]
    exceptions.ConnectTimeoutError = FakeConnectTimeoutError  # type: ignore[attr-defined]
    exceptions.NewConnectionError = FakeNewConnectionError  # type: ignore[attr-defined]
    exceptions.ReadTimeoutError = FakeReadTimeoutError  # type: ignore[attr-defined]
    exceptions.InsecureRequestWarning = FakeInsecureRequestWarning  # type: ignore[attr-defined]
    urllib3.exceptions = exceptions  # type: ignore[attr-defined]
    return {
        "kubernetes": kubernetes,
        "kubernetes.client": client,
        "kubernetes.client.exceptions": client_exceptions,
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


# ---------------------------------------------------------------------------------------------
# What only a stand-in can show


def test_the_kubeconfig_is_never_written_back_and_urllib3_never_retries_behind_our_back(
    server: FakeServer,
) -> None:
    live.read_cluster(None, None)
    (connect,) = [kw for _, method, kw in server.calls if method == "new_client_from_config"]
    # A refreshed token is not persisted; a timeout is one timeout, not urllib3's four.
    assert (connect["persist_config"], connect["retries"]) == (False, False)


def test_the_client_is_closed_after_reading_even_when_a_list_fails(server: FakeServer) -> None:
    live.read_cluster(None, None)
    assert server.calls[-1] == ("ApiClient", "close", {})
    server.calls.clear()
    server.errors["list_job_for_all_namespaces"] = FakeApiException(500, "Internal Server Error")
    with pytest.raises(ClusterAccessError, match=r"list jobs: 500 Internal Server Error$"):
        live.read_cluster(None, None)
    assert server.calls[-1] == ("ApiClient", "close", {})


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


def test_a_credential_plugin_failing_mid_read_is_one_line(
    server: FakeServer, capsys: pytest.CaptureFixture[str]
) -> None:
    # The client runs exec plugins (and refreshes their tokens) as it makes each request.
    server.errors["list_pod_for_all_namespaces"] = FakeConfigException(
        "exec: process returned 1.\nStderr: error: token expired, run `cloud login`"
    )
    code, out, err = run(["schedule", "--live"], capsys)
    assert (code, out) == (2, "")
    assert err == (
        'topospread: error: cluster "kind-dev" (https://127.0.0.1:6443): list pods: credentials: '
        "exec: process returned 1. Stderr: error: token expired, run `cloud login`\n"
    )
