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

When the API server no longer accepts a continue token (410 Expired: the snapshot the first page
came from is compacted away), the pages read are dropped and the resource is listed again in one
call, as client-go's pager does; the token the 410 offers would read on from a newer snapshot,
mixing two states of the cluster. An answer with Retry-After (429, or 5xx) is asked again after
that delay, as client-go does, within bounds (``MAX_RETRIES``, ``RETRY_WAIT_LIMIT``). Nothing else
is retried, urllib3's own retries included, and every request has a connect and a read timeout
(``REQUEST_TIMEOUT``): a server that stops answering ends the read after one timeout.

Every failure — client missing, kubeconfig missing or invalid, unknown context, an API error, a
server out of reach — is one ``ClusterAccessError`` line naming the kubeconfig or the cluster and
the resource. One exception: a resource other than nodes and pods that the user may not list
(403) or the server does not serve (404) is left out, with a warning saying what that costs,
as a read-only user often may not list every kind.
"""

from __future__ import annotations

import os
import re
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Final, NamedTuple
from warnings import catch_warnings, simplefilter

import msgspec

from topospread.api.loader import Object, load_text
from topospread.api.strict import FieldValidation, field_validation
from topospread.errors import ClusterAccessError

INSTALL_HINT: Final = "install the live extra: pip install 'topospread[live]'"
DEFAULT_KUBECONFIG: Final = "~/.kube/config"
# kubectl get's default --chunk-size.
PAGE_SIZE: Final = 500
# (connect, read) seconds for each list call; a page of 500 pods is far below a second's work,
# and the API server gives up on a request itself after a minute (its --request-timeout).
REQUEST_TIMEOUT: Final = (10.0, 60.0)
# A 429 or 5xx answer carrying Retry-After is asked again after that many seconds, up to
# client-go's default of 10 retries (checkWait and withRetry in rest/, v1.35), as long as the
# waits for one page add up to no more than RETRY_WAIT_LIMIT seconds: a server asking for longer
# ends the read at once instead of stalling a CI job. Other errors are not retried.
MAX_RETRIES: Final = 10
RETRY_WAIT_LIMIT: Final = 60.0


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
    _Resource(
        "StorageV1Api",
        "list_storage_class",
        "storageclasses",
        "StorageClassList",
        "a claim's binding mode counts as Immediate and nothing can be provisioned",
    ),
    _Resource(
        "CoreV1Api",
        "list_persistent_volume",
        "persistentvolumes",
        "PersistentVolumeList",
        "a bound claim's volume is missing, so its pods stay Pending",
    ),
    _Resource(
        "CoreV1Api",
        "list_persistent_volume_claim_for_all_namespaces",
        "persistentvolumeclaims",
        "PersistentVolumeClaimList",
        "every pod with a claim stays Pending (the claim is not found)",
    ),
    _Resource(
        "StorageV1Api",
        "list_csi_node",
        "csinodes",
        "CSINodeList",
        "no node has CSI volume limits or migrated in-tree plugins",
    ),
    _Resource(
        "StorageV1Api",
        "list_csi_driver",
        "csidrivers",
        "CSIDriverList",
        "no driver's storage capacity is checked",
    ),
    _Resource(
        "StorageV1Api",
        "list_csi_storage_capacity_for_all_namespaces",
        "csistoragecapacities",
        "CSIStorageCapacityList",
        "no driver's storage capacity is checked",
    ),
)

# HTTP statuses after which an optional resource is left out rather than ending the read:
# not allowed to list it (RBAC), or the API server does not serve it (an API group turned off).
_SKIPPABLE: Final = frozenset({403, 404})


class _ListRefused(ClusterAccessError):
    """The API server answered a list call with an error status."""

    def __init__(self, message: str, status: int | None, reason: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.reason = reason  # the Status's reason, e.g. "Expired"


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
    """The pieces of the ``kubernetes`` package this module uses (``Any``: its generated API
    classes are looked up by name)."""

    client: Any
    config: Any
    api_exception: type[Exception]
    config_exception: type[Exception]
    http_error: type[Exception]
    read_timeout: type[Exception]
    connect_timeout: type[Exception]
    new_connection_error: type[Exception]
    insecure_request_warning: type[Warning]


def _import_client() -> _Client:
    try:
        # The only Kubernetes client import in topospread; see the module docstring.
        from kubernetes import client, config
        from kubernetes.client.exceptions import ApiException
        from urllib3.exceptions import (
            ConnectTimeoutError,
            HTTPError,
            InsecureRequestWarning,
            NewConnectionError,
            ReadTimeoutError,
        )
    except ImportError as err:
        raise ClusterAccessError(
            f"reading a live cluster needs the Kubernetes Python client: {INSTALL_HINT}"
        ) from err
    return _Client(
        client,
        config,
        ApiException,
        config.ConfigException,
        HTTPError,
        ReadTimeoutError,
        ConnectTimeoutError,
        NewConnectionError,
        InsecureRequestWarning,
    )


def read_cluster(kubeconfig: str | None, context: str | None) -> LiveCluster:
    """List every resource the scheduler reads from the cluster of a kubeconfig context.

    ``kubeconfig`` None means what kubectl reads: ``$KUBECONFIG`` (a list of files, merged),
    else ``~/.kube/config``; ``context`` None means its current context. Nothing is written, not
    even the kubeconfig (the client would persist refreshed tokens into it).
    """
    k8s = _import_client()
    shown = _kubeconfig_location(kubeconfig)
    with _readable_again(shown) as config_file:
        return _read_cluster(k8s, config_file, shown, context)


def _read_cluster(k8s: _Client, config_file: str, shown: str, context: str | None) -> LiveCluster:
    """``read_cluster`` with the kubeconfig the client reads (``config_file``) and the one
    messages name (``shown``)."""
    api_client, context_name = _connect(k8s, config_file, shown, context)
    configuration = getattr(api_client, "configuration", None)
    server = str(getattr(configuration, "host", "") or "")
    if not server:
        raise ClusterAccessError(
            f"kubeconfig {shown}: invalid configuration: no server found for cluster "
            f'"{_cluster_of(k8s, config_file, context_name)}"'
        )
    where = _cluster_label(context_name, server)
    objects: list[Object] = []
    warnings: list[str] = []
    if getattr(configuration, "verify_ssl", True) is False:
        warnings.append(
            f"{where}: the API server's certificate is not verified "
            "(insecure-skip-tls-verify in the kubeconfig)"
        )
    # Said once above, not by urllib3 on every request (two lines each, on stderr).
    with catch_warnings():
        simplefilter("ignore", k8s.insecure_request_warning)
        _read_all(k8s, api_client, where, objects, warnings)
    return LiveCluster(
        context=context_name, server=server, objects=objects, warnings=tuple(warnings)
    )


def _read_all(
    k8s: _Client, api_client: Any, where: str, objects: list[Object], warnings: list[str]
) -> None:
    """List every resource into ``objects``; close the client however that ends."""
    apis: dict[str, Any] = {}
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


def _kubeconfig_location(kubeconfig: str | None) -> str:
    """The kubeconfig path list the client should read; checked here for a clearer message."""
    if kubeconfig is not None:
        path = os.path.expanduser(kubeconfig)
        if not os.path.exists(path):
            raise ClusterAccessError(f"--kubeconfig {kubeconfig}: no such file")
        if os.path.isdir(path):
            raise ClusterAccessError(
                f"--kubeconfig {kubeconfig}: is a directory, not a kubeconfig file"
            )
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


@contextmanager
def _readable_again(location: str) -> Iterator[str]:
    """A kubeconfig location the client can read more than once (it reads the file for the
    client, then for its contexts): a pipe (``--kubeconfig <(...)``, as kubectl takes) is
    read once into a file only this user can read, removed when the client is done with it.
    A list of paths, or a regular file, is given as it is."""
    path = os.path.expanduser(location)
    if os.pathsep in location or os.path.isfile(path):
        yield location
        return
    try:
        with open(path, "rb") as pipe:
            data = pipe.read()
    except OSError as err:
        raise ClusterAccessError(f"--kubeconfig {location}: {err.strerror or err}") from err
    fd, spooled = tempfile.mkstemp(prefix="topospread-kubeconfig-", suffix=".yaml")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        yield spooled
    finally:
        os.unlink(spooled)


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


def _connect(k8s: _Client, config_file: str, shown: str, context: str | None) -> tuple[Any, str]:
    """An API client for the context, and the context's name (errors name ``shown``)."""
    import yaml  # the client parses kubeconfigs with PyYAML; its errors are ours to report

    configuration = k8s.client.Configuration()
    # No urllib3 retries (its default is 3 for reads): a timeout is one timeout, not four, and
    # the only retries are those client-go makes, in _get_page.
    configuration.retries = False
    try:
        api_client = k8s.config.new_client_from_config(
            config_file=config_file,
            context=context,
            persist_config=False,
            client_configuration=configuration,
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
        # The client names the file it read: the pipe's copy is the pipe to the user.
        text = _config_message(err, context).replace(config_file, shown)
        raise ClusterAccessError(f"kubeconfig {shown}: {text}") from err
    return api_client, context


def _cluster_of(k8s: _Client, config_file: str, context: str) -> str:
    """The name of the cluster ``context`` uses (the context's name if it cannot be read)."""
    try:
        contexts, _ = k8s.config.list_kube_config_contexts(config_file=config_file)
        found = next(c for c in contexts if c.get("name") == context)
        return str(found["context"]["cluster"])
    except Exception:  # only a better name is at stake
        return context


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
    label = f"{where}: list {resource.name}"
    out: list[Object] = []
    token: str | None = None
    limit: int | None = PAGE_SIZE
    page_number = 0
    while True:
        page_number += 1
        try:
            data = _get_page(k8s, list_call, label, limit=limit, _continue=token)
        except _ListRefused as err:
            if err.status != 410 or err.reason != "Expired" or not token or limit is None:
                raise
            # The snapshot of the first page is gone: list again, all in one call, as
            # client-go's pager does (FullListIfExpired in tools/pager/pager.go, v1.35).
            out, token, limit, page_number = [], None, None, 0
            continue
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
        # The API server wrote these objects, perhaps at a newer version than the schema here:
        # no field of theirs is the user's mistake (kubectl get does not validate either).
        with field_validation(FieldValidation.IGNORE):
            out.extend(load_text(data, source))
        token = page.metadata.continue_
        if not token:
            return out


def _get_page(k8s: _Client, list_call: Callable[..., Any], label: str, **query: Any) -> bytes:
    """One list call's body, asked again after a Retry-After answer as client-go does."""
    waited = 0.0
    retries = 0
    while True:
        try:
            response = list_call(**query, _preload_content=False, _request_timeout=REQUEST_TIMEOUT)
            data: bytes = response.data
            return data
        except k8s.api_exception as err:
            status = getattr(err, "status", None)
            status = status if isinstance(status, int) else None
            message = f"{label}: {_api_message(err)}"
            reason = _status_reason(getattr(err, "body", None))
            wait = _retry_after(err) if status == 429 or (status or 0) >= 500 else None
            if wait is None:
                raise _ListRefused(message, status, reason) from err
            if retries == MAX_RETRIES:
                raise _ListRefused(
                    f"{message} (still refused after {retries} retries)", status, reason
                ) from err
            if waited + wait > RETRY_WAIT_LIMIT:
                raise _ListRefused(
                    f"{message} (the server asks to retry after {wait:g} s, more than "
                    f"{RETRY_WAIT_LIMIT - waited:g} s left to wait)",
                    status,
                    reason,
                ) from err
        except k8s.http_error as err:
            raise ClusterAccessError(f"{label}: {_unreachable(k8s, err)}") from err
        except k8s.config_exception as err:  # credentials refreshed per request (exec plugins)
            raise ClusterAccessError(f"{label}: credentials: {_one_line(str(err))}") from err
        time.sleep(wait)
        waited += wait
        retries += 1


def _retry_after(err: Any) -> float | None:
    """Seconds from a Retry-After header given as a whole number, as client-go reads it."""
    headers: Any = getattr(err, "headers", None) or {}
    value = headers.get("Retry-After")  # urllib3's headers match names in any case
    if isinstance(value, str) and value.strip().isdigit():
        return float(value.strip())
    return None


def _unreachable(k8s: _Client, err: BaseException) -> str:
    """What a urllib3 error says of the server: no answer in time, or not reached at all."""
    # NewConnectionError (refused, no route) is a ConnectTimeoutError subclass in urllib3.
    if isinstance(err, k8s.read_timeout):
        return f"the API server did not answer within {REQUEST_TIMEOUT[1]:g} s"
    if isinstance(err, k8s.connect_timeout) and not isinstance(err, k8s.new_connection_error):
        return f"cannot reach the API server: no connection within {REQUEST_TIMEOUT[0]:g} s"
    return f"cannot reach the API server: {_reason(err)}"


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
    """The ``message`` of the metav1.Status the API server sends with an error, if any; a body
    that is not JSON is quoted on one line."""
    if not isinstance(body, bytes | str) or not body:
        return ""
    try:
        status = msgspec.json.decode(body)
    except msgspec.DecodeError:
        return _one_line(body if isinstance(body, str) else body.decode("utf-8", "replace"))
    message = status.get("message") if isinstance(status, dict) else None
    return _one_line(message) if isinstance(message, str) else ""


def _status_reason(body: Any) -> str:
    """The ``reason`` of the metav1.Status in an error's body (``Expired``...), or ""."""
    try:
        status = msgspec.json.decode(body) if isinstance(body, bytes | str) and body else None
    except msgspec.DecodeError:
        return ""
    reason = status.get("reason") if isinstance(status, dict) else None
    return reason if isinstance(reason, str) else ""


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
