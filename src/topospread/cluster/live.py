"""Read a live cluster, read-only, into the same typed objects manifest files decode to.

This is the one module that imports a Kubernetes client: the official ``kubernetes`` package,
an optional extra (``pip install 'topospread[live]'``), imported only when a cluster is read.
Files saved with ``kubectl get -o yaml|json`` need none of it.

Only list calls are made, one resource at a time, in pages of ``PAGE_SIZE`` followed with the
``continue`` token, as ``kubectl get`` pages (``--chunk-size``). Each page is asked for as the
API server's own JSON (``_preload_content=False``) and handed to the manifest loader: a typed
list (``PodList``) exactly as ``kubectl get -o json`` prints it, so objects from a cluster and
from a saved file decode through the same code to the same structs. That also skips the client's
models, which would cost ~30x msgspec's decoding time on big clusters and drop fields the client
release does not know.

Every failure — client missing, kubeconfig missing or invalid, unknown context, an API error, a
server out of reach — is one ``ClusterAccessError`` line naming the kubeconfig or the cluster and
the resource. One exception: a resource other than nodes and pods that the user may not list
(403) or the server does not serve (404) is left out, with a warning saying what that costs,
as a read-only user often may not list every kind.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, NamedTuple

import msgspec

from topospread.api.loader import Object, load_text
from topospread.errors import ClusterAccessError

INSTALL_HINT: Final = "install the live extra: pip install 'topospread[live]'"
DEFAULT_KUBECONFIG: Final = "~/.kube/config"
# kubectl get's default --chunk-size.
PAGE_SIZE: Final = 500
# (connect, read) seconds for each list call; a page of 500 pods is far below a second's work.
REQUEST_TIMEOUT: Final = (10.0, 120.0)


class _Resource(NamedTuple):
    api: str  # the client's API class
    method: str  # its list method across all namespaces
    name: str  # the resource as kubectl names it
    list_kind: str  # the kind of a page, e.g. PodList
    # What is lost when the resource cannot be listed (not allowed, or not served); empty for
    # the resources nothing can be decided without (nodes, pods): their failure ends the read.
    without: str = ""


_SPREAD_SELECTORS: Final = "default topology spreading derives no selector from them"
_CONTROLLERS: Final = "simulate does not run their controller"

# Everything the scheduler and the workload controllers read, in the order kubectl would list it.
RESOURCES: Final = (
    _Resource("CoreV1Api", "list_node", "nodes", "NodeList"),
    _Resource("CoreV1Api", "list_pod_for_all_namespaces", "pods", "PodList"),
    _Resource(
        "CoreV1Api",
        "list_service_for_all_namespaces",
        "services",
        "ServiceList",
        _SPREAD_SELECTORS,
    ),
    _Resource(
        "CoreV1Api",
        "list_replication_controller_for_all_namespaces",
        "replicationcontrollers",
        "ReplicationControllerList",
        f"{_SPREAD_SELECTORS}, and {_CONTROLLERS}",
    ),
    _Resource(
        "AppsV1Api",
        "list_replica_set_for_all_namespaces",
        "replicasets",
        "ReplicaSetList",
        f"{_SPREAD_SELECTORS}, and {_CONTROLLERS}",
    ),
    _Resource(
        "AppsV1Api",
        "list_stateful_set_for_all_namespaces",
        "statefulsets",
        "StatefulSetList",
        f"{_SPREAD_SELECTORS}, and {_CONTROLLERS}",
    ),
    _Resource(
        "AppsV1Api",
        "list_deployment_for_all_namespaces",
        "deployments",
        "DeploymentList",
        _CONTROLLERS,
    ),
    _Resource(
        "AppsV1Api",
        "list_daemon_set_for_all_namespaces",
        "daemonsets",
        "DaemonSetList",
        _CONTROLLERS,
    ),
    _Resource("BatchV1Api", "list_job_for_all_namespaces", "jobs", "JobList", _CONTROLLERS),
    _Resource(
        "CoreV1Api",
        "list_namespace",
        "namespaces",
        "NamespaceList",
        "a pod affinity term's namespaceSelector matches no namespace",
    ),
    _Resource(
        "SchedulingV1Api",
        "list_priority_class",
        "priorityclasses",
        "PriorityClassList",
        "a pod's priority is its spec.priority as the API server admitted it",
    ),
    _Resource(
        "PolicyV1Api",
        "list_pod_disruption_budget_for_all_namespaces",
        "poddisruptionbudgets",
        "PodDisruptionBudgetList",
        "preemption and drain see no disruption budget",
    ),
)

# HTTP statuses after which an optional resource is left out rather than ending the read:
# not allowed to list it (RBAC), or the API server does not serve it (an API group turned off).
_SKIPPABLE: Final = frozenset({403, 404})


class _ListRefused(ClusterAccessError):
    """The API server answered a list call with an error status."""

    def __init__(self, message: str, status: int | None) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True, slots=True)
class LiveCluster:
    """What one read of a cluster returned; ``source`` prefixes messages about its objects."""

    context: str
    server: str
    objects: list[Object]
    # One line per optional resource that could not be listed, saying what is lost.
    warnings: tuple[str, ...] = ()

    @property
    def source(self) -> str:
        return _cluster_label(self.context, self.server)


def _cluster_label(context: str, server: str) -> str:
    return f'cluster "{context}"' + (f" ({server})" if server else "")


class _ListMeta(msgspec.Struct):
    continue_: str = msgspec.field(default="", name="continue")


class _Page(msgspec.Struct):
    """The envelope of a list response; its items are decoded by the manifest loader."""

    kind: str = ""
    metadata: _ListMeta = msgspec.field(default_factory=_ListMeta)


_page_decoder: Final = msgspec.json.Decoder(_Page)


class _Client(NamedTuple):
    """The pieces of the ``kubernetes`` package this module uses (all ``Any``: it has no types)."""

    client: Any
    config: Any
    api_exception: type[Exception]
    config_exception: type[Exception]
    http_error: type[Exception]


def _import_client() -> _Client:
    try:
        # The only Kubernetes client import in topospread; see the module docstring.
        from kubernetes import client, config
        from kubernetes.client.rest import ApiException
        from urllib3.exceptions import HTTPError
    except ImportError as err:
        raise ClusterAccessError(
            f"reading a live cluster needs the Kubernetes Python client: {INSTALL_HINT}"
        ) from err
    return _Client(client, config, ApiException, config.ConfigException, HTTPError)


def read_cluster(kubeconfig: str | None, context: str | None) -> LiveCluster:
    """List every resource the scheduler reads from the cluster of a kubeconfig context.

    ``kubeconfig`` None means what kubectl reads: ``$KUBECONFIG`` (a list of files, merged),
    else ``~/.kube/config``; ``context`` None means its current context. Nothing is written, not
    even the kubeconfig (the client would persist refreshed tokens into it).
    """
    k8s = _import_client()
    config_file = _kubeconfig_location(kubeconfig)
    api_client, context_name = _connect(k8s, config_file, context)
    server = str(getattr(getattr(api_client, "configuration", None), "host", "") or "")
    where = _cluster_label(context_name, server)
    apis: dict[str, Any] = {}
    objects: list[Object] = []
    warnings: list[str] = []
    try:
        for resource in RESOURCES:
            api = apis.get(resource.api)
            if api is None:
                api = apis[resource.api] = getattr(k8s.client, resource.api)(api_client)
            try:
                objects.extend(_list_all(k8s, getattr(api, resource.method), resource, where))
            except _ListRefused as err:
                if not resource.without or err.status not in _SKIPPABLE:
                    raise
                warnings.append(f"{err}; read on without {resource.name}: {resource.without}")
    finally:
        close = getattr(api_client, "close", None)
        if callable(close):
            close()
    return LiveCluster(
        context=context_name, server=server, objects=objects, warnings=tuple(warnings)
    )


def _kubeconfig_location(kubeconfig: str | None) -> str:
    """The kubeconfig path list the client should read; checked here for a clearer message."""
    if kubeconfig is not None:
        if not os.path.isfile(os.path.expanduser(kubeconfig)):
            raise ClusterAccessError(f"--kubeconfig {kubeconfig}: no such file")
        return kubeconfig
    # Read at call time, not when the client was imported (it caches $KUBECONFIG then).
    env = os.environ.get("KUBECONFIG", "")
    location = env or DEFAULT_KUBECONFIG
    paths = [p for p in location.split(os.pathsep) if p]
    if not any(os.path.isfile(os.path.expanduser(p)) for p in paths):
        named = f"KUBECONFIG={env}" if env else DEFAULT_KUBECONFIG
        raise ClusterAccessError(
            f"no kubeconfig found ({named} does not exist): "
            "name one with --kubeconfig PATH, or set KUBECONFIG"
        )
    return location


def context_namespace(kubeconfig: str | None, context: str | None) -> str | None:
    """The namespace a kubeconfig context names (kubectl's default namespace), or None: no
    kubeconfig, no such context, or none named. Read as kubectl reads it, the first file of
    the list that names the current context winning; needs no Kubernetes client."""
    import yaml

    try:
        location = _kubeconfig_location(kubeconfig)
    except ClusterAccessError:
        return None
    docs = []
    for path in (p for p in location.split(os.pathsep) if p):
        try:
            with open(os.path.expanduser(path), encoding="utf-8") as f:
                doc = yaml.safe_load(f)
        except (OSError, yaml.YAMLError):
            continue
        if isinstance(doc, dict):
            docs.append(doc)
    name = context or next((d["current-context"] for d in docs if d.get("current-context")), None)
    for doc in docs:
        for entry in doc.get("contexts") or []:
            if isinstance(entry, dict) and entry.get("name") == name:
                namespace = (entry.get("context") or {}).get("namespace")
                return str(namespace) if namespace else None
    return None


def _connect(k8s: _Client, config_file: str, context: str | None) -> tuple[Any, str]:
    """An API client for the context, and the context's name."""
    import yaml  # the client parses kubeconfigs with PyYAML; its errors are ours to report

    try:
        api_client = k8s.config.new_client_from_config(
            config_file=config_file, context=context, persist_config=False
        )
        if context is None:
            _, current = k8s.config.list_kube_config_contexts(config_file=config_file)
            context = str(current["name"])
    # A malformed kubeconfig surfaces from the client as whatever its parsing tripped on.
    except (
        k8s.config_exception,
        yaml.YAMLError,
        OSError,
        KeyError,
        TypeError,
        ValueError,
        AttributeError,
    ) as err:
        raise ClusterAccessError(
            f"kubeconfig {config_file}: {_config_message(err, context)}"
        ) from err
    return api_client, context


def _config_message(err: BaseException, context: str | None) -> str:
    text = _one_line(str(err))
    if "Expected key current-context" in text:
        return "no current-context is set: choose a context with --context NAME"
    unknown = f"Expected object with name {context} in"
    if context is not None and unknown in text and "contexts" in text:
        return f'context "{context}" does not exist'
    return text


def _list_all(
    k8s: _Client, list_call: Callable[..., Any], resource: _Resource, where: str
) -> list[Object]:
    """Every object of one resource, page by page (a consistent snapshot, as the API
    server guarantees for pages that follow a continue token)."""
    out: list[Object] = []
    token: str | None = None
    page_number = 0
    while True:
        page_number += 1
        label = f"{where}: list {resource.name}"
        try:
            response = list_call(
                limit=PAGE_SIZE,
                _continue=token,
                _preload_content=False,
                _request_timeout=REQUEST_TIMEOUT,
            )
            data: bytes = response.data
        except k8s.api_exception as err:
            status = getattr(err, "status", None)
            raise _ListRefused(
                f"{label}: {_api_message(err)}", status if isinstance(status, int) else None
            ) from err
        except k8s.http_error as err:
            raise ClusterAccessError(
                f"{label}: cannot reach the API server: {_reason(err)}"
            ) from err
        except k8s.config_exception as err:  # credentials refreshed per request (exec plugins)
            raise ClusterAccessError(f"{label}: credentials: {_one_line(str(err))}") from err
        try:
            page = _page_decoder.decode(data)
        except msgspec.DecodeError as err:
            raise ClusterAccessError(
                f"{label}: the response is not a {resource.list_kind} (JSON): {err}"
            ) from err
        if page.kind != resource.list_kind:
            raise ClusterAccessError(
                f'{label}: the response is not a {resource.list_kind}: kind "{page.kind}"'
            )
        source = f"{where}: {resource.name}" + (f" page {page_number}" if page_number > 1 else "")
        out.extend(load_text(data, source))
        token = page.metadata.continue_
        if not token:
            return out


def _api_message(err: Any) -> str:
    """``403 Forbidden: <the API server's message>`` from an ApiException."""
    status = getattr(err, "status", None)
    reason = _one_line(str(getattr(err, "reason", "") or ""))
    if not status:  # no HTTP response: the client wraps TLS failures so
        return f"cannot reach the API server: {_reason_text(reason)}"
    message = _status_message(getattr(err, "body", None))
    head = f"{status} {reason}".strip()
    return f"{head}: {message}" if message else head


def _status_message(body: Any) -> str:
    """The ``message`` of the metav1.Status the API server sends with an error, if any."""
    if isinstance(body, bytes | str) and body:
        try:
            status = msgspec.json.decode(body)
        except msgspec.DecodeError:
            return _one_line(body if isinstance(body, str) else body.decode("utf-8", "replace"))
        if isinstance(status, dict) and isinstance(status.get("message"), str):
            return _one_line(status["message"])
    return ""


def _reason(err: BaseException) -> str:
    """The innermost cause of a urllib3 error (MaxRetryError wraps the one that counts)."""
    inner = getattr(err, "reason", None)
    return _reason_text(_one_line(str(inner if isinstance(inner, BaseException) else err)))


# "[Errno 111] Connection refused", "[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed…"
_ERRNO: Final = re.compile(r"\[Errno -?\d+\] ([^'\")]+)")
_SSL: Final = re.compile(r"\[SSL: [A-Z_]+\] ([^'\")(]+)")
_OBJECT_REPR: Final = re.compile(r"<[^<>]* object at 0x[0-9a-f]+>:? ?")


def _reason_text(text: str) -> str:
    for pattern in (_ERRNO, _SSL):
        match = pattern.search(text)
        if match:
            return match.group(1).strip()
    return _OBJECT_REPR.sub("", text)


def _one_line(text: str) -> str:
    return " ".join(text.split())
