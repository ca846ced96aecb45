"""Live clusters through the official ``kubernetes`` client, against a local HTTPS API server.

The server (``ApiServer``) binds to 127.0.0.1 on an ephemeral port and speaks the API's list
protocol: TLS with a certificate signed by a CA made for the test (with ``openssl``: the client
does not depend on ``cryptography``), a bearer token checked on every request (401 without it),
typed list pages (``PodList``...) whose items carry no ``apiVersion``/``kind``, ``limit`` and
opaque ``continue`` tokens, 410 Expired for a token older than the last compaction (with the
fresh, inconsistent token the API server offers), 429 with Retry-After, RBAC's 403, and on
demand a connection it accepts and never answers. It records every request, so each test checks
that only GET list calls were made: no watch, no single-object get, no write.

The cluster is ``test_live.CLUSTER``; saved as ``kubectl get -o json`` prints it, it must decode
to the objects the client reads.
"""

from __future__ import annotations

import base64
import contextlib
import copy
import json
import os
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest

from test_cli import run
from test_live import CLUSTER
from topospread.api.loader import load_manifests
from topospread.cluster import live
from topospread.errors import ClusterAccessError
from topospread.simulator.scenario import load_live_scenario, load_manifest_files

pytest.importorskip("kubernetes", reason="the live extra is not installed (make test installs it)")

TOKEN = "s3cr3t-t0ken"
USER = "system:serviceaccount:x:y"
GROUP_VERSIONS = {
    "CoreV1Api": "v1",
    "AppsV1Api": "apps/v1",
    "BatchV1Api": "batch/v1",
    "SchedulingV1Api": "scheduling.k8s.io/v1",
    "PolicyV1Api": "policy/v1",
    "StorageV1Api": "storage.k8s.io/v1",
}
RESOURCES = {r.name: r for r in live.RESOURCES}
RESOURCE_OF_KIND = {r.list_kind.removesuffix("List"): r.name for r in live.RESOURCES}


def group_version(resource: str) -> str:
    return GROUP_VERSIONS[RESOURCES[resource].api]


def list_path(resource: str) -> str:
    gv = group_version(resource)
    return f"/api/{gv}/{resource}" if gv == "v1" else f"/apis/{gv}/{resource}"


RESOURCE_AT = {list_path(name): name for name in RESOURCES}

EXPIRED = (
    "The provided continue parameter is too old to display a consistent list result. You can "
    "start a new list without the continue parameter, or use the continue token in this "
    "response to retrieve the remainder of the results. Continuing with the provided token "
    "results in an inconsistent list - objects that were created, modified, or deleted between "
    "the time the first chunk was returned and now may show up in the list."
)


# ---------------------------------------------------------------------------------------------
# Certificates: a CA, and a server certificate it signs for 127.0.0.1 and localhost


@dataclass(frozen=True)
class Certs:
    ca: Path
    cert: Path
    key: Path

    @property
    def ca_data(self) -> str:
        """The CA as a kubeconfig's certificate-authority-data."""
        return base64.b64encode(self.ca.read_bytes()).decode()


@pytest.fixture(scope="session")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Certs:
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("openssl makes the test API server's certificates; it is not installed")
    d = tmp_path_factory.mktemp("pki")
    key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]

    def openssl_run(*args: str) -> None:
        subprocess.run([openssl, *args], cwd=d, check=True, capture_output=True, timeout=60)

    openssl_run(
        "req", "-x509", *key, "-keyout", "ca.key", "-out", "ca.crt", "-days", "2",
        "-subj", "/CN=topospread test CA",
        "-addext", "basicConstraints=critical,CA:TRUE",
        "-addext", "keyUsage=critical,keyCertSign,cRLSign",
    )  # fmt: skip
    openssl_run(
        "req", *key, "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=apiserver"
    )
    (d / "server.ext").write_text(
        "subjectAltName=IP:127.0.0.1,DNS:localhost\n"
        "basicConstraints=critical,CA:FALSE\n"
        "keyUsage=critical,digitalSignature\n"
        "extendedKeyUsage=serverAuth\n"
        "subjectKeyIdentifier=hash\n"
        "authorityKeyIdentifier=keyid\n"
    )
    openssl_run(
        "x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
        "-set_serial", "2", "-days", "2", "-extfile", "server.ext", "-out", "server.crt",
    )  # fmt: skip
    return Certs(ca=d / "ca.crt", cert=d / "server.crt", key=d / "server.key")


# ---------------------------------------------------------------------------------------------
# The API server


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    query: dict[str, str]
    authorization: str | None
    at: float  # time.monotonic()


class ApiServer:
    """The list endpoints of a Kubernetes API server, over HTTPS on 127.0.0.1."""

    def __init__(self, certs: Certs, objects: list[dict[str, Any]]) -> None:
        self.lists: dict[str, list[dict[str, Any]]] = {name: [] for name in RESOURCES}
        for obj in objects:
            self.add(obj)
        self.resource_version = 1000
        self.compacted = 0  # continue tokens from this resourceVersion or older are expired
        self.requests: list[Request] = []
        # What to answer instead of the list, per resource:
        self.forbidden: set[str] = set()  # RBAC's 403
        self.not_served: set[str] = set()  # 404, as for an API group turned off
        self.retry_after: dict[str, list[tuple[int, int]]] = {}  # (status, seconds), in turn
        self.raw: dict[str, tuple[int, str, bytes]] = {}  # status, content type, body
        # Made to the cluster (then compacted) just before a continued page of the resource.
        self.change_before_next_page: dict[str, Callable[[ApiServer], None]] = {}
        self.silent = False  # read each request, never answer it
        self.silent_before_tls = False  # accept each connection, never start TLS
        self._stopping = threading.Event()
        self._connections: set[socket.socket] = set()
        self._lock = threading.Lock()
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(certs.cert, certs.key)
        self._httpd = _HTTPSServer(("127.0.0.1", 0), _Handler, context, self)
        self.port = self._httpd.server_address[1]
        self.url = f"https://127.0.0.1:{self.port}"
        # A short poll: shutdown() waits for the loop to look (0.5 s a test by default).
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        with self._lock:
            for conn in self._connections:
                with contextlib.suppress(OSError):
                    conn.shutdown(socket.SHUT_RDWR)
        self._thread.join(timeout=5)

    # The cluster

    def add(self, obj: dict[str, Any]) -> None:
        listed = copy.deepcopy(obj)
        # The API server leaves apiVersion and kind out of list items; the list has them.
        kind = listed.pop("kind")
        del listed["apiVersion"]
        self.lists[RESOURCE_OF_KIND[kind]].append(listed)

    def remove(self, resource: str, name: str) -> None:
        self.lists[resource] = [o for o in self.lists[resource] if o["metadata"]["name"] != name]

    def as_kubectl_file(self, path: Path) -> Path:
        """The cluster as ``kubectl get ... -A -o json`` saves it."""
        items = [
            {
                "apiVersion": group_version(resource),
                "kind": RESOURCES[resource].list_kind.removesuffix("List"),
                **obj,
            }
            for resource, objs in self.lists.items()
            for obj in objs
        ]
        path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
        return path

    # Requests

    def get_requests(self, resource: str) -> list[Request]:
        return [r for r in self.requests if r.path == list_path(resource)]

    def connection(self, conn: socket.socket, opened: bool) -> None:
        with self._lock:
            (self._connections.add if opened else self._connections.discard)(conn)

    def wait_until_stopped(self) -> None:
        self._stopping.wait(60)

    def answer(self, handler: _Handler) -> None:
        url = urlparse(handler.path)
        query = {k: v[-1] for k, v in parse_qs(url.query, keep_blank_values=True).items()}
        auth = handler.headers.get("Authorization")
        self.requests.append(Request(handler.command, url.path, query, auth, time.monotonic()))
        if self.silent:
            self.wait_until_stopped()
            handler.close_connection = True
            return
        if handler.command != "GET":
            return self._status(handler, 405, "MethodNotAllowed", "the server does not allow it")
        if auth != f"Bearer {TOKEN}":
            return self._status(handler, 401, "Unauthorized", "Unauthorized")
        resource = RESOURCE_AT.get(url.path)
        if resource is None or resource in self.not_served:
            return self._status(
                handler, 404, "NotFound", "the server could not find the requested resource"
            )
        if resource in self.raw:
            code, content_type, body = self.raw[resource]
            return self._send(handler, code, body, content_type)
        if resource in self.forbidden:
            group = group_version(resource).rpartition("/")[0]
            qualified = f"{resource}.{group}" if group else resource
            message = (
                f'{qualified} is forbidden: User "{USER}" cannot list resource "{resource}" '
                f'in API group "{group}" at the cluster scope'
            )
            return self._status(handler, 403, "Forbidden", message)
        if self.retry_after.get(resource):
            code, seconds = self.retry_after[resource].pop(0)
            reason = "TooManyRequests" if code == 429 else "ServiceUnavailable"
            message = "Too many requests, please try again later."
            return self._status(handler, code, reason, message, {"Retry-After": str(seconds)})
        return self._list(handler, resource, query)

    def _list(self, handler: _Handler, resource: str, query: dict[str, str]) -> None:
        start, version = 0, self.resource_version
        if query.get("continue"):
            change = self.change_before_next_page.pop(resource, None)
            if change is not None:
                self.compacted = self.resource_version
                change(self)
                self.resource_version += 1
            token = json.loads(base64.urlsafe_b64decode(query["continue"]))
            version, start = token["rv"], token["start"]
            if version <= self.compacted:
                fresh = _token(self.resource_version, start)
                return self._status(handler, 410, "Expired", EXPIRED, continue_=fresh)
        items = self.lists[resource]
        limit = int(query.get("limit") or 0)
        stop = start + limit if limit else len(items)
        metadata: dict[str, Any] = {"resourceVersion": str(version)}
        if stop < len(items):
            metadata["continue"] = _token(version, stop)
            metadata["remainingItemCount"] = len(items) - stop
        body = {
            "kind": RESOURCES[resource].list_kind,
            "apiVersion": group_version(resource),
            "metadata": metadata,
            "items": items[start:stop],
        }
        self._send(handler, 200, json.dumps(body).encode())

    def _status(
        self,
        handler: _Handler,
        code: int,
        reason: str,
        message: str,
        headers: dict[str, str] | None = None,
        continue_: str = "",
    ) -> None:
        status = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {"continue": continue_} if continue_ else {},
            "status": "Failure",
            "message": message,
            "reason": reason,
            "code": code,
        }
        self._send(handler, code, json.dumps(status).encode(), headers=headers)

    @staticmethod
    def _send(
        handler: _Handler,
        code: int,
        body: bytes,
        content_type: str = "application/json",
        headers: dict[str, str] | None = None,
    ) -> None:
        handler.send_response(code)
        handler.send_header("Content-Type", content_type)
        handler.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            handler.send_header(name, value)
        handler.end_headers()
        handler.wfile.write(body)


def _token(resource_version: int, start: int) -> str:
    return base64.urlsafe_b64encode(
        json.dumps({"rv": resource_version, "start": start}).encode()
    ).decode()


class _HTTPSServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(
        self,
        address: tuple[str, int],
        handler: type[BaseHTTPRequestHandler],
        context: ssl.SSLContext,
        api: ApiServer,
    ) -> None:
        super().__init__(address, handler)
        self.context, self.api = context, api

    def finish_request(self, request: Any, client_address: Any) -> None:
        # TLS is set up in the connection's own thread, so a slow client holds up no other.
        self.api.connection(request, True)
        try:
            if self.api.silent_before_tls:
                self.api.wait_until_stopped()
                return
            # Headers and body go out in two writes: without this, Nagle's algorithm holds the
            # body back for the client's delayed ACK (40 ms a request).
            request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            try:
                conn = self.context.wrap_socket(request, server_side=True)
            except (ssl.SSLError, OSError):
                return  # the client refused the certificate, or went away
            with conn:
                self.RequestHandlerClass(conn, client_address, self)
        finally:
            self.api.connection(request, False)

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client hanging up mid-answer (a test's timeout) is not news


class _Handler(BaseHTTPRequestHandler):
    server: _HTTPSServer
    protocol_version = "HTTP/1.1"  # keep-alive, as the API server

    def do_GET(self) -> None:
        self.server.api.answer(self)

    do_POST = do_PUT = do_PATCH = do_DELETE = do_GET

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def api(certs: Certs) -> Iterator[ApiServer]:
    server = ApiServer(certs, CLUSTER)
    server.start()
    try:
        yield server
    finally:
        server.stop()


def write_kubeconfig(
    path: Path,
    contexts: dict[str, tuple[str, str | Path | None, str | None]],
    current: str | None,
) -> Path:
    """A kubeconfig with one cluster and user per context: name → (server URL, the CA as
    certificate-authority-data or a certificate-authority file or None, bearer token or None)."""
    doc: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Config",
        "preferences": {},
        "clusters": [],
        "users": [],
        "contexts": [],
    }
    for name, (server, ca_data, token) in contexts.items():
        cluster: dict[str, Any] = {"server": server}
        if isinstance(ca_data, Path):
            cluster["certificate-authority"] = str(ca_data)
        elif ca_data is not None:
            cluster["certificate-authority-data"] = ca_data
        doc["clusters"].append({"name": name, "cluster": cluster})
        doc["users"].append({"name": name, "user": {"token": token} if token else {}})
        doc["contexts"].append({"name": name, "context": {"cluster": name, "user": name}})
    if current is not None:
        doc["current-context"] = current
    path.write_text(json.dumps(doc, indent=1))
    return path


@pytest.fixture
def kubeconfig(api: ApiServer, certs: Certs, tmp_path: Path) -> Path:
    return write_kubeconfig(
        tmp_path / "kubeconfig", {"local": (api.url, certs.ca_data, TOKEN)}, "local"
    )


@pytest.fixture
def kubectl_file(api: ApiServer, tmp_path: Path) -> Path:
    return api.as_kubectl_file(tmp_path / "cluster.json")


@pytest.fixture(autouse=True)
def no_ambient_kubeconfig(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test reads the machine's own kubeconfig (or proxy settings) by accident."""
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "no-ambient-kubeconfig"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for name in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"):
        monkeypatch.delenv(name, raising=False)


def by_identity(objects: list[Any]) -> list[Any]:
    return sorted(objects, key=lambda o: (type(o).__name__, o.metadata.namespace, o.metadata.name))


def assert_list_calls_only(api: ApiServer) -> None:
    """Every request a GET of a list across all namespaces, with the token; no watch."""
    assert api.requests
    for request in api.requests:
        assert request.method == "GET", request
        assert request.path in RESOURCE_AT, request
        assert set(request.query) <= {"limit", "continue"}, request
        assert request.authorization == f"Bearer {TOKEN}", request


def one_error_line(err: str) -> str:
    """The message of the single ``topospread: error:`` line that is all of stderr."""
    assert "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("topospread: error: "), err
    return lines[0].removeprefix("topospread: error: ")


# ---------------------------------------------------------------------------------------------
# Reading


def test_the_cluster_read_through_the_client_is_the_one_saved_with_kubectl_get_o_json(
    api: ApiServer, kubeconfig: Path, kubectl_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(live, "PAGE_SIZE", 2)
    read = live.read_cluster(str(kubeconfig), None)
    assert (read.context, read.server, read.warnings) == ("local", api.url, ())
    assert by_identity(read.objects) == by_identity(load_manifests(kubectl_file))
    assert len(read.objects) == len(CLUSTER)
    assert_list_calls_only(api)
    assert [r.path for r in api.requests if "continue" not in r.query] == [
        list_path(r.name) for r in live.RESOURCES
    ]


def test_pages_follow_the_servers_continue_tokens_with_the_same_limit(
    api: ApiServer, kubeconfig: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(live, "PAGE_SIZE", 2)
    pods = [
        o for o in live.read_cluster(str(kubeconfig), None).objects if type(o).__name__ == "Pod"
    ]
    assert [p.metadata.name for p in pods] == ["web-1", "web-2", "web-3", "web-4", "web-5"]
    assert [r.query for r in api.get_requests("pods")] == [
        {"limit": "2"},
        {"limit": "2", "continue": _token(1000, 2)},
        {"limit": "2", "continue": _token(1000, 4)},
    ]


def test_an_expired_continue_token_lists_the_resource_again_in_one_call_as_client_gos_pager(
    api: ApiServer, kubeconfig: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Between the first and the second page of pods, web-1 goes, web-6 comes, and the API
    # server compacts: its 410 offers a token into the new state, which would read web-3 twice
    # or miss pods; the read starts again and sees the new state only.
    def churn(server: ApiServer) -> None:
        server.remove("pods", "web-1")
        web_6 = copy.deepcopy(next(o for o in CLUSTER if o["metadata"]["name"] == "web-2"))
        web_6["metadata"]["name"] = "web-6"
        server.add(web_6)

    api.change_before_next_page["pods"] = churn
    monkeypatch.setattr(live, "PAGE_SIZE", 2)
    read = live.read_cluster(str(kubeconfig), None)
    pods = [o.metadata.name for o in read.objects if type(o).__name__ == "Pod"]
    assert pods == ["web-2", "web-3", "web-4", "web-5", "web-6"]
    assert [r.query for r in api.get_requests("pods")] == [
        {"limit": "2"},
        {"limit": "2", "continue": _token(1000, 2)},  # 410 Expired
        {},  # the full list, as client-go's pager falls back to
    ]
    assert_list_calls_only(api)
    saved = api.as_kubectl_file(tmp_path / "after.json")
    assert by_identity(read.objects) == by_identity(load_manifests(saved))


@pytest.mark.parametrize(
    "status", [429, 503], ids=["429 Too Many Requests", "503 Service Unavailable"]
)
def test_an_answer_with_retry_after_is_asked_again_after_that_delay(
    api: ApiServer,
    kubeconfig: Path,
    kubectl_file: Path,
    capsys: pytest.CaptureFixture[str],
    status: int,
) -> None:
    api.retry_after["nodes"] = [(status, 1)]
    from_cluster = run(["schedule", "--kubeconfig", str(kubeconfig), "-o", "jsonl"], capsys)
    first, second = api.get_requests("nodes")
    assert 1.0 <= second.at - first.at < 5.0
    assert_list_calls_only(api)
    from_file = run(["schedule", "--nodes", str(kubectl_file), "-o", "jsonl"], capsys)
    assert from_cluster == from_file
    assert from_cluster[0] == 0


def test_retries_after_retry_after_are_bounded_in_number_and_in_time(
    api: ApiServer, kubeconfig: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["schedule", "--kubeconfig", str(kubeconfig)]
    refused = (
        f'cluster "local" ({api.url}): list pods: 429 Too Many Requests: Too many requests, '
        "please try again later."
    )
    api.retry_after["pods"] = [(429, 0)] * (live.MAX_RETRIES + 1)
    code, out, err = run(argv, capsys)
    assert (code, out) == (2, "")
    assert one_error_line(err) == f"{refused} (still refused after 10 retries)"
    assert len(api.get_requests("pods")) == 1 + live.MAX_RETRIES
    api.requests.clear()
    api.retry_after["pods"] = [(429, 3600)]
    started = time.monotonic()
    code, out, err = run(argv, capsys)
    assert time.monotonic() - started < 10  # not an hour
    assert (code, out) == (2, "")
    assert one_error_line(err) == (
        f"{refused} (the server asks to retry after 3600 s, more than 60 s left to wait)"
    )
    assert len(api.get_requests("pods")) == 1


def test_the_current_context_is_read_unless_one_is_named(
    api: ApiServer, certs: Certs, tmp_path: Path
) -> None:
    config = write_kubeconfig(
        tmp_path / "two-contexts",
        {
            "elsewhere": (f"https://127.0.0.1:{closed_port()}", certs.ca_data, TOKEN),
            "local": (api.url, certs.ca, TOKEN),  # the CA as a file this time
        },
        "elsewhere",
    )
    read = live.read_cluster(str(config), "local")
    assert (read.context, read.server) == ("local", api.url)
    with pytest.raises(ClusterAccessError, match=r'^cluster "elsewhere" .*: Connection refused$'):
        live.read_cluster(str(config), None)


def test_kubeconfig_then_the_environment_then_the_home_default(
    api: ApiServer,
    kubeconfig: Path,
    certs: Certs,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    unreachable = write_kubeconfig(
        tmp_path / "unreachable",
        {"gone": (f"https://127.0.0.1:{closed_port()}", None, None)},
        "gone",
    )
    monkeypatch.setenv("KUBECONFIG", str(unreachable))
    assert live.read_cluster(str(kubeconfig), None).context == "local"  # --kubeconfig wins
    with pytest.raises(ClusterAccessError, match=r'^cluster "gone"'):
        live.read_cluster(None, None)
    monkeypatch.setenv("KUBECONFIG", str(kubeconfig))
    assert live.read_cluster(None, None).context == "local"
    monkeypatch.delenv("KUBECONFIG")
    home = tmp_path / "home"
    (home / ".kube").mkdir(parents=True)
    (home / ".kube" / "config").write_text(kubeconfig.read_text())
    assert live.read_cluster(None, None).context == "local"
    assert_list_calls_only(api)


def test_a_server_whose_certificate_is_not_verified_is_said_once_not_on_every_request(
    api: ApiServer, tmp_path: Path
) -> None:
    config = write_kubeconfig(tmp_path / "config", {"local": (api.url, None, TOKEN)}, "local")
    doc = json.loads(config.read_text())
    doc["clusters"][0]["cluster"]["insecure-skip-tls-verify"] = True
    config.write_text(json.dumps(doc))
    # A process of its own: pytest would catch the warnings urllib3 prints on stderr.
    topospread = Path(sys.executable).parent / "topospread"
    done = subprocess.run(
        [str(topospread), "schedule", "--kubeconfig", str(config), "-o", "jsonl"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0
    assert done.stderr.splitlines()[0] == (
        f'topospread: warning: cluster "local" ({api.url}): the API server\'s certificate is not '
        "verified (insecure-skip-tls-verify in the kubeconfig)"
    )
    assert all(line.startswith("topospread: warning: ") for line in done.stderr.splitlines())
    assert_list_calls_only(api)


def test_a_kubeconfig_given_as_a_pipe_is_read_as_kubectl_reads_it(
    api: ApiServer, kubeconfig: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # `--kubeconfig <(...)`: the pipe is read once; its copy, which the client reads more than
    # once, is this user's alone and gone when the read is over.
    def pipe(data: bytes) -> str:
        read_end, write_end = os.pipe()
        os.write(write_end, data)  # a kubeconfig fits the pipe's buffer
        os.close(write_end)
        return f"/dev/fd/{read_end}"

    spooled = set(Path(tempfile.gettempdir()).glob("topospread-kubeconfig-*"))
    read = live.read_cluster(pipe(kubeconfig.read_bytes()), None)
    assert (read.context, read.server) == ("local", api.url)
    direct = live.read_cluster(str(kubeconfig), None)
    assert by_identity(read.objects) == by_identity(direct.objects)
    assert set(Path(tempfile.gettempdir()).glob("topospread-kubeconfig-*")) == spooled
    # Its mistakes name the pipe, not the copy.
    broken = pipe(b"apiVersion: v1\nkind: Config\n")
    code, _, err = run(["schedule", "--kubeconfig", broken], capsys)
    assert code == 2 and tempfile.gettempdir() not in err
    assert one_error_line(err).startswith(f"kubeconfig {broken}: ")


def test_the_kubeconfig_is_left_as_it_was(api: ApiServer, kubeconfig: Path) -> None:
    before = kubeconfig.read_bytes()
    live.read_cluster(str(kubeconfig), None)
    assert kubeconfig.read_bytes() == before


# ---------------------------------------------------------------------------------------------
# The commands that read a live cluster


@pytest.fixture
def chart(tmp_path: Path) -> Path:
    """One more Deployment to check against the cluster."""
    path = tmp_path / "chart.yaml"
    path.write_text(
        json.dumps(
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": "api", "namespace": "shop"},
                "spec": {
                    "replicas": 2,
                    "selector": {"matchLabels": {"app": "api"}},
                    "template": {
                        "metadata": {"labels": {"app": "api"}},
                        "spec": {
                            "containers": [
                                {
                                    "name": "api",
                                    "image": "api:1",
                                    "resources": {"requests": {"cpu": "100m"}},
                                }
                            ],
                            "topologySpreadConstraints": [
                                {
                                    "maxSkew": 1,
                                    "topologyKey": "topology.kubernetes.io/zone",
                                    "whenUnsatisfiable": "DoNotSchedule",
                                    "labelSelector": {"matchLabels": {"app": "api"}},
                                }
                            ],
                        },
                    },
                },
            }
        )
    )
    return path


@pytest.fixture
def outage(tmp_path: Path) -> Path:
    """A timeline with no cluster of its own: zone-a goes dark."""
    path = tmp_path / "outage.yaml"
    path.write_text(
        "timeline:\n- {name: zone-a goes dark, loseZone: zone-a}\n- {name: 5 minutes, wait: 5m}\n"
    )
    return path


# Each command, reading the cluster live (the kubeconfig as {kubeconfig}) and from the file.
COMMANDS = {
    "schedule": (["schedule", "--live", "--kubeconfig", "{kubeconfig}", "-o", "jsonl"],
                 ["schedule", "--nodes", "{file}", "-o", "jsonl"]),
    # explain reads no cluster files yet (a scenario or live): its output is checked below.
    "explain": (["explain", "--pod", "shop/web-4", "--kubeconfig", "{kubeconfig}", "-o", "jsonl"],
                []),
    "check": (["check", "{chart}", "--live", "--kubeconfig", "{kubeconfig}", "-o", "json"],
              ["check", "{chart}", "--cluster", "{file}", "-o", "json"]),
    "simulate": (["simulate", "{outage}", "--kubeconfig", "{kubeconfig}", "-o", "json"],
                 ["simulate", "{outage}", "--cluster", "{file}", "-o", "json"]),
}  # fmt: skip


@pytest.fixture(params=sorted(COMMANDS))
def command(
    request: pytest.FixtureRequest, kubeconfig: Path, chart: Path, outage: Path, tmp_path: Path
) -> tuple[list[str], list[str]]:
    names = {"kubeconfig": kubeconfig, "chart": chart, "outage": outage}
    names["file"] = tmp_path / "cluster.json"
    live_argv, file_argv = COMMANDS[request.param]
    return (
        [a.format_map(names) for a in live_argv],
        [a.format_map(names) for a in file_argv],
    )


def test_each_command_prints_for_the_live_cluster_what_it_prints_for_its_saved_file(
    api: ApiServer,
    command: tuple[list[str], list[str]],
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    live_argv, file_argv = command
    api.as_kubectl_file(tmp_path / "cluster.json")
    from_cluster = run(live_argv, capsys)
    assert from_cluster[0] in (0, 1)
    assert_list_calls_only(api)
    if file_argv:
        assert from_cluster == run(file_argv, capsys)
    else:
        assert json.loads(from_cluster[1])["pod"] == "shop/web-4"


def test_a_live_scenario_equals_the_one_from_the_kubectl_file(
    api: ApiServer, kubeconfig: Path, kubectl_file: Path
) -> None:
    from_cluster = load_live_scenario(str(kubeconfig), None)
    from_file = load_manifest_files([kubectl_file])
    assert from_cluster.nodes == from_file.nodes
    assert from_cluster.pods == from_file.pods
    assert from_cluster.queue == from_file.queue
    assert [p.metadata.name for p in from_cluster.queue] == ["web-4", "web-5"]


def test_a_live_cluster_and_files_together_are_refused_before_any_request(
    api: ApiServer, kubeconfig: Path, kubectl_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["schedule", "--kubeconfig", str(kubeconfig), "--nodes", str(kubectl_file)]
    code, _, err = run(argv, capsys)
    assert code == 2
    assert one_error_line(err).startswith("give one input:")
    assert api.requests == []


# ---------------------------------------------------------------------------------------------
# Left out with a warning: a resource other than nodes and pods that may not be listed


def test_an_optional_resource_the_user_may_not_list_is_left_out_with_a_warning(
    api: ApiServer, kubeconfig: Path, kubectl_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    api.forbidden.add("services")
    api.not_served.add("priorityclasses")
    code, _, err = run(["schedule", "--kubeconfig", str(kubeconfig), "-o", "jsonl"], capsys)
    assert code == 0
    where = f'cluster "local" ({api.url})'
    assert err.splitlines()[:2] == [
        f"topospread: warning: {where}: list services: 403 Forbidden: services is forbidden: "
        f'User "{USER}" cannot list resource "services" in API group "" at the cluster scope; '
        "read on without services: default topology spreading derives no selector from them",
        f"topospread: warning: {where}: list priorityclasses: 404 Not Found: the server could "
        "not find the requested resource; read on without priorityclasses: a pod's priority is "
        "its spec.priority as the API server admitted it",
    ]
    read = live.read_cluster(str(kubeconfig), None)
    assert by_identity(read.objects) == by_identity(
        [
            o
            for o in load_manifests(kubectl_file)
            if type(o).__name__ not in ("Service", "PriorityClass")
        ]
    )


def test_storage_objects_are_read_and_a_forbidden_storage_list_is_left_out_with_a_warning(
    api: ApiServer, kubeconfig: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    api.add(
        {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "fast"},
         "provisioner": "ebs.csi.aws.com", "volumeBindingMode": "WaitForFirstConsumer"}
    )  # fmt: skip
    api.add(
        {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
         "metadata": {"name": "data", "namespace": "shop"},
         "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "fast",
                  "resources": {"requests": {"storage": "1Gi"}}}}
    )  # fmt: skip
    api.forbidden.add("persistentvolumes")
    code, _, err = run(["schedule", "--kubeconfig", str(kubeconfig), "-o", "jsonl"], capsys)
    assert code == 0
    assert (
        f'topospread: warning: cluster "local" ({api.url}): list persistentvolumes: 403 Forbidden'
        in err
    )
    assert "read on without persistentvolumes: a bound claim's volume is missing" in err
    read = live.read_cluster(str(kubeconfig), None)
    kinds = {type(o).__name__ for o in read.objects}
    assert {"StorageClass", "PersistentVolumeClaim"} <= kinds
    assert "PersistentVolume" not in kinds


# ---------------------------------------------------------------------------------------------
# Failures: one line on stderr, exit code 2, for every command


def test_nodes_or_pods_forbidden_by_rbac_end_the_read_with_the_api_servers_message(
    api: ApiServer,
    command: tuple[list[str], list[str]],
    capsys: pytest.CaptureFixture[str],
) -> None:
    for resource in ("nodes", "pods"):
        api.forbidden = {resource}
        code, out, err = run(command[0], capsys)
        assert (code, out) == (2, "")
        assert one_error_line(err) == (
            f'cluster "local" ({api.url}): list {resource}: 403 Forbidden: {resource} is '
            f'forbidden: User "{USER}" cannot list resource "{resource}" in API group "" at the '
            "cluster scope"
        )
    assert_list_calls_only(api)


def test_a_server_that_stops_answering_ends_the_read_after_the_read_timeout(
    api: ApiServer,
    command: tuple[list[str], list[str]],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(live, "REQUEST_TIMEOUT", (0.5, 0.5))
    api.silent = True
    started = time.monotonic()
    code, out, err = run(command[0], capsys)
    assert time.monotonic() - started < 10  # 0.5 s timeouts; the default is 60 s
    assert (code, out) == (2, "")
    assert one_error_line(err) == (
        f'cluster "local" ({api.url}): list nodes: the API server did not answer within 0.5 s'
    )
    assert len(api.requests) == 1  # asked once: no hidden retries


def test_a_server_that_accepts_the_connection_and_never_starts_tls_ends_the_read(
    api: ApiServer,
    kubeconfig: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(live, "REQUEST_TIMEOUT", (0.5, 0.5))
    api.silent_before_tls = True
    started = time.monotonic()
    code, out, err = run(["schedule", "--kubeconfig", str(kubeconfig)], capsys)
    assert time.monotonic() - started < 10  # 0.5 s timeouts; the default is 60 s
    assert (code, out) == (2, "")
    assert one_error_line(err) == (
        f'cluster "local" ({api.url}): list nodes: the API server did not answer within 0.5 s'
    )


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize(
    ("case", "message"),
    [
        pytest.param(
            "no token",
            "{where}: list nodes: 401 Unauthorized: Unauthorized",
            id="no token: 401",
        ),
        pytest.param(
            "wrong token",
            "{where}: list nodes: 401 Unauthorized: Unauthorized",
            id="a wrong token: 401",
        ),
        pytest.param(
            "no CA",
            "{where}: list nodes: cannot reach the API server: certificate verify failed: "
            "unable to get local issuer certificate",
            id="the kubeconfig without the CA: TLS fails",
        ),
        pytest.param(
            "refused",
            "{where}: list nodes: cannot reach the API server: Connection refused",
            id="connection refused",
        ),
        pytest.param(
            "html",
            "{where}: list nodes: the response is not a NodeList (JSON): JSON is malformed: "
            "invalid character (byte 0)",
            id="a proxy's HTML page",
        ),
        pytest.param(
            "500 plain",
            "{where}: list pods: 500 Internal Server Error: etcdserver: request timed out",
            id="a body that is not a Status is quoted",
        ),
        pytest.param(
            "bad object",
            "{where}: pods: items[1] (Pod shop/web-2): json: cannot unmarshal string into Go "
            "struct field PodSpec.spec.priority of type int32",
            id="an invalid object names the cluster and the object",
        ),
        pytest.param(
            "gone node",
            '{where} (Pod shop/web-1): spec.nodeName: Not found: "node-gone": no such node',
            id="a pod on a node the cluster no longer has",
        ),
    ],
)
def test_every_failure_is_one_line_and_exit_code_2(
    api: ApiServer,
    certs: Certs,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    case: str,
    message: str,
) -> None:
    url, ca, token = api.url, certs.ca_data, TOKEN
    if case == "no token":
        token = None
    elif case == "wrong token":
        token = "stolen"
    elif case == "no CA":
        ca = None
    elif case == "refused":
        url = f"https://127.0.0.1:{closed_port()}"
    elif case == "html":
        api.raw["nodes"] = (200, "text/html", b"<html>proxy login</html>")
    elif case == "500 plain":
        api.raw["pods"] = (500, "text/plain", b"etcdserver: request timed out\n")
    elif case == "bad object":
        api.lists["pods"][1]["spec"]["priority"] = "high"
    elif case == "gone node":
        api.lists["pods"][0]["spec"]["nodeName"] = "node-gone"
    config = write_kubeconfig(tmp_path / "config", {"local": (url, ca, token)}, "local")
    code, out, err = run(["schedule", "--live", "--kubeconfig", str(config)], capsys)
    assert (code, out) == (2, "")
    assert one_error_line(err) == message.format(where=f'cluster "local" ({url})')
    # Read-only, and nothing here is asked twice (no Retry-After).
    assert {r.method for r in api.requests} <= {"GET"}
    assert len({r.path for r in api.requests}) == len(api.requests)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        pytest.param(
            ["--context", "staging"],
            'kubeconfig {kubeconfig}: context "staging" does not exist',
            id="an unknown context",
        ),
        pytest.param(
            ["--kubeconfig", "{missing}"],
            "--kubeconfig {missing}: no such file",
            id="a kubeconfig that is not there",
        ),
        pytest.param(
            ["--kubeconfig", "{directory}"],
            "--kubeconfig {directory}: is a directory, not a kubeconfig file",
            id="a directory",
        ),
        pytest.param(
            ["--kubeconfig", "/dev/null"],
            "kubeconfig /dev/null: Invalid kube-config. /dev/null file is empty",
            id="an empty device",
        ),
    ],
)
def test_kubeconfig_mistakes_are_one_line_and_exit_code_2(
    api: ApiServer,
    kubeconfig: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    message: str,
) -> None:
    names = {"kubeconfig": kubeconfig, "missing": tmp_path / "nope", "directory": tmp_path}
    argv = ["schedule", "--kubeconfig", str(kubeconfig), *(a.format_map(names) for a in argv)]
    code, _, err = run(argv, capsys)
    assert code == 2
    assert one_error_line(err) == message.format_map(names)
    assert api.requests == []


def test_a_kubeconfig_without_a_current_context_says_to_choose_one(
    api: ApiServer, certs: Certs, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = write_kubeconfig(tmp_path / "config", {"local": (api.url, certs.ca_data, TOKEN)}, None)
    code, _, err = run(["schedule", "--kubeconfig", str(config)], capsys)
    assert code == 2
    assert one_error_line(err) == (
        f"kubeconfig {config}: no current-context is set: choose a context with --context NAME"
    )
    code, _, err = run(["schedule", "--kubeconfig", str(config), "--context", "local"], capsys)
    assert code == 0 and "error" not in err


def test_no_kubeconfig_at_all_says_how_to_name_one(
    api: ApiServer, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("KUBECONFIG")
    code, _, err = run(["schedule", "--live"], capsys)
    assert code == 2
    assert one_error_line(err) == (
        "no kubeconfig found (~/.kube/config does not exist): "
        "name one with --kubeconfig PATH, or set KUBECONFIG"
    )


def test_a_kubeconfig_cluster_without_a_server_is_client_gos_invalid_configuration(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The client was left to request a URL without a host ("No host specified"), named after
    # the context; client-go refuses the configuration first (validateClusterInfo).
    config = write_kubeconfig(tmp_path / "config", {"local": ("", None, TOKEN)}, "local")
    code, _, err = run(["schedule", "--kubeconfig", str(config)], capsys)
    assert code == 2
    assert one_error_line(err) == (
        f'kubeconfig {config}: invalid configuration: no server found for cluster "local"'
    )
