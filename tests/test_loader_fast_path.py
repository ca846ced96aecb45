"""The rapidyaml fast path decodes YAML exactly as the go-yaml-faithful path does, or declines."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from topospread.api import loader
from topospread.errors import ManifestError


def exact(text: str, monkeypatch: pytest.MonkeyPatch) -> Any:
    with monkeypatch.context() as m:
        m.setattr(loader, "ryml", None)
        return outcome(text)


def outcome(text: str) -> Any:
    try:
        return [msgspec.to_builtins(o) for o in loader.load_text(text, "t.yaml")]
    except ManifestError as err:
        return ("error", str(err))


POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: p
  labels:
    LABELS
spec:
  nodeName: NODE
  containers:
  - name: c
    resources:
      requests:
        cpu: CPU
"""


def pod_text(labels: str = "app: web", node: str = "n1", cpu: str = "100m") -> str:
    return POD.replace("LABELS", labels).replace("NODE", node).replace("CPU", cpu)


@pytest.mark.parametrize(
    "text",
    [
        pytest.param(pod_text(), id="a plain pod"),
        pytest.param(pod_text(labels="app: yes"), id="plain yes as a label value"),
        pytest.param(pod_text(labels="app: 'yes'"), id="quoted yes"),
        pytest.param(pod_text(labels="on: web"), id="plain on as a label key"),
        pytest.param(pod_text(labels="app: ~"), id="tilde as null"),
        pytest.param(pod_text(labels="app: 0755"), id="octal-looking value"),
        pytest.param(pod_text(labels="app: 1_000"), id="underscored number"),
        pytest.param(pod_text(labels="'0123': x"), id="quoted leading-zero key"),
        pytest.param(pod_text(labels="0123: x"), id="plain leading-zero key"),
        pytest.param(pod_text(labels="1e3: x"), id="float-looking key"),
        pytest.param(pod_text(node="~"), id="null node name"),
        pytest.param(pod_text(cpu="0x10"), id="hex quantity"),
        pytest.param(pod_text(cpu=".5"), id="dot-leading quantity"),
        pytest.param(pod_text(cpu="+1"), id="signed quantity"),
        pytest.param(pod_text(labels="app: &a web\n    tier: *a"), id="anchor and alias"),
        pytest.param(pod_text(labels="app: !!str 12"), id="a tag"),
        pytest.param(pod_text().replace("\n", "\r\n"), id="CRLF line endings"),
        pytest.param(pod_text() + "---\n" + pod_text(node="n2"), id="two documents"),
        pytest.param("---\n---\n" + pod_text(), id="empty documents first"),
        pytest.param(pod_text(labels='app: "caf\\u00e9\\tx"'), id="escapes in a quoted string"),
        pytest.param(pod_text(labels="app: |\n      multi\n      line"), id="a block scalar"),
        pytest.param(pod_text(labels="app: web # a comment"), id="a trailing comment"),
        pytest.param(pod_text(labels="app: 12"), id="a number where a string belongs"),
        pytest.param("# only a comment\n", id="no objects"),
        pytest.param("apiVersion: v1\nkind: Pod\nmetadata: {name: p\n", id="broken YAML"),
        pytest.param(
            "kind: List\napiVersion: v1\nitems:\n- " + pod_text().replace("\n", "\n  "), id="a List"
        ),
    ],
)
def test_fast_and_exact_paths_agree(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    assert outcome(text) == exact(text, monkeypatch)


def test_the_fast_path_really_runs_on_kubectl_style_yaml() -> None:
    assert loader._fast_yaml(pod_text(), "t.yaml") is not None
    assert loader._fast_yaml(pod_text(labels="app: yes"), "t.yaml") is None


words = st.sampled_from(
    ["web", "yes", "no", "on", "off", "y", "n", "true", "True", "null", "~", "0755", "12",
     "1.5", "1e3", "0x1F", "1_000", "-", "a b", "x: y", "#x", "", "é", "on-call"]
)  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(
    labels=st.dictionaries(st.sampled_from(["app", "tier", "yes", "1", "on", "k8s.io/x"]), words),
    node=words,
    flow=st.booleans(),
)
def test_random_manifests_decode_the_same_either_way(
    labels: dict[str, str], node: str, flow: bool
) -> None:
    manifest = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "labels": labels},
        "spec": {"nodeName": node},
    }
    # PyYAML's emitter quotes every string YAML 1.1 would read otherwise, as go-yaml's does.
    text = yaml.safe_dump(manifest, default_flow_style=flow, allow_unicode=True)
    fast = outcome(text)
    loader_ryml = loader.ryml
    try:
        loader.ryml = None
        slow = outcome(text)
    finally:
        loader.ryml = loader_ryml
    assert fast == slow
