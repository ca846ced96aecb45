"""The rapidyaml fast path decodes YAML exactly as the go-yaml-faithful path does, or declines."""

from __future__ import annotations

import re
from typing import Any

import msgspec
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from topospread.api import loader, yaml_fast, yaml_screen, yaml_split
from topospread.errors import ManifestError


@pytest.fixture(autouse=True)
def fast_path_for_any_size(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fast path takes only large text in use; here it is tried on text of every size."""
    monkeypatch.setattr(yaml_fast, "_FAST_MIN_BYTES", 0)


def exact(text: str, monkeypatch: pytest.MonkeyPatch) -> Any:
    with monkeypatch.context() as m:
        m.setattr(yaml_fast, "ryml", None)
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
        pytest.param(pod_text(labels="app: 0789"), id="leading-zero decimal"),
        pytest.param(pod_text(labels="app: 041e8"), id="leading-zero float"),
        pytest.param(pod_text(labels="app: 0b101"), id="binary-looking value"),
        pytest.param(pod_text(labels="app: 0o17"), id="0o octal-looking value"),
        pytest.param(pod_text(labels="app: 041e824e121f9b3b2332c397fbc4edf1"), id="machine id"),
        pytest.param(pod_text(labels="app: 00ff"), id="leading-zero hex string"),
        pytest.param(pod_text(labels="app: 0bde35c14466871aecdc2c98e770d8ce"), id="0b machine id"),
        pytest.param(pod_text(labels="app: 0x1g"), id="not quite hex"),
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
    assert yaml_fast.fast_yaml(pod_text(), "t.yaml") is not None
    # A node's machineID is 32 hex digits, plain in kubectl's output; one that starts with 0
    # and a digit must not send a whole cluster down the exact path.
    machine_id = pod_text(labels="app: 041e824e121f9b3b2332c397fbc4edf1")
    assert yaml_fast.fast_yaml(machine_id, "t.yaml") is not None
    machine_id = pod_text(labels="app: 0bde35c14466871aecdc2c98e770d8ce")
    assert yaml_fast.fast_yaml(machine_id, "t.yaml") is not None
    assert yaml_fast.fast_yaml(pod_text(labels="app: yes"), "t.yaml") is None


words = st.sampled_from(
    ["web", "yes", "no", "on", "off", "y", "n", "true", "True", "null", "~", "0755", "12",
     "1.5", "1e3", "0x1F", "1_000", "-", "a b", "x: y", "#x", "", "é", "on-call", "0789",
     "041e8", "0b101", "0o17", "00ff", "041e824e121f9b3b2332c397fbc4edf1", "0_1", "-012",
     "0bde35c1", "0b1", "0o8", "0x1g"]
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
    saved_ryml = yaml_fast.ryml
    try:
        yaml_fast.ryml = None
        slow = outcome(text)
    finally:
        yaml_fast.ryml = saved_ryml
    assert fast == slow


# ---------------------------------------------------------------------------------------------
# Large files: cut at item or document boundaries, decoded part by part (forked workers with
# several cores). Tiny parts here make small texts take those paths.


def kubectl_list(pods: list[dict[str, Any]]) -> str:
    """A List as ``kubectl get pods -o yaml`` prints it: items at column 0, metadata after."""
    body = yaml.safe_dump({"items": pods}, default_flow_style=False, sort_keys=True)
    return f"apiVersion: v1\n{body}kind: List\nmetadata:\n  resourceVersion: ''\n"


def pod_manifest(i: int, labels: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"p{i}", "namespace": "ns", "labels": labels},
        "spec": {"nodeName": f"n{i % 3}", "containers": [{"name": "c", "image": "pause"}]},
    }


def stream(pods: list[dict[str, Any]]) -> str:
    return yaml.safe_dump_all(pods, default_flow_style=False, explicit_start=True)


@pytest.fixture(params=[1, 2], ids=["one core", "two cores"])
def tiny_parts(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Parts of 300 bytes; records how many parts each fast-path call cut its text into."""
    monkeypatch.setattr(yaml_fast, "_CHUNK_BYTES", 300)
    monkeypatch.setattr(yaml_fast.os, "cpu_count", lambda: request.param)
    counts: list[int] = []
    split = yaml_fast.split_yaml

    def spy(raw: bytes, parts: int) -> list[bytes] | None:
        out = split(raw, parts)
        counts.append(0 if out is None else len(out))
        return out

    monkeypatch.setattr(yaml_fast, "split_yaml", spy)
    return counts


@pytest.mark.parametrize("form", [kubectl_list, stream], ids=["a kubectl List", "a stream"])
def test_a_large_file_cut_in_parts_decodes_as_the_exact_path_does(
    form: Any, tiny_parts: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    text = form([pod_manifest(i, {"app": "web", "i": str(i)}) for i in range(12)])
    fast = outcome(text)
    assert tiny_parts and tiny_parts[0] > 2, "the text was not cut"
    assert len(fast) == 12 and [o["metadata"]["name"] for o in fast] == [f"p{i}" for i in range(12)]
    assert fast == exact(text, monkeypatch)


def test_one_risky_part_sends_the_whole_file_down_the_exact_path(
    tiny_parts: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    pods = [pod_manifest(i, {"app": "web"}) for i in range(12)]
    text = kubectl_list(pods).replace("app: web", "app: yes", 1)  # YAML 1.1 reads a bool
    assert yaml_fast.fast_yaml(text, "t.yaml") is None
    assert outcome(text) == exact(text, monkeypatch)


def test_files_that_are_not_cut_at_column_0_items_are_read_whole(
    tiny_parts: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    pods = [pod_manifest(i, {"app": "web"}) for i in range(12)]
    indented = yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": pods}, indent=4)
    indented = indented.replace("\n-", "\n  -")  # items indented under items:
    assert outcome(indented) == exact(indented, monkeypatch)
    assert tiny_parts == [0]


def test_a_cut_inside_a_multi_line_quoted_scalar_never_changes_the_result(
    tiny_parts: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    pods = [pod_manifest(i, {"app": "web"}) for i in range(12)]
    text = kubectl_list(pods).replace(
        "  name: p3\n", '  name: p3\n  annotations:\n    note: "one\n- two"\n', 1
    )
    assert outcome(text) == exact(text, monkeypatch)


@settings(max_examples=40, deadline=None)
@given(
    labels=st.lists(st.dictionaries(st.sampled_from(["app", "yes", "1", "on"]), words), max_size=8),
    part=st.integers(min_value=1, max_value=600),
    as_stream=st.booleans(),
)
def test_random_lists_cut_anywhere_decode_the_same_either_way(
    labels: list[dict[str, str]], part: int, as_stream: bool
) -> None:
    pods = [pod_manifest(i, ls) for i, ls in enumerate(labels)]
    text = (stream if as_stream else kubectl_list)(pods) if pods else "apiVersion: v1\n"
    saved = yaml_fast._CHUNK_BYTES, yaml_fast.ryml
    try:
        yaml_fast._CHUNK_BYTES = part
        fast = outcome(text)
        yaml_fast.ryml = None
        slow = outcome(text)
    finally:
        yaml_fast._CHUNK_BYTES, yaml_fast.ryml = saved
    assert fast == slow


_DECLINE_OFTEN = """
from topospread.api import loader, yaml_fast
ok = [b"apiVersion: v1\\nkind: Pod\\nmetadata:\\n  name: p%d\\n" % i for i in range(6)]
risky = b"apiVersion: v1\\nkind: Pod\\nmetadata:\\n  name: x\\n  labels:\\n    app: yes\\n"
for i in range(1200):
    assert yaml_fast._fast_yaml_parallel([risky, *ok[1:]], 2) is None
print("done")
"""


def test_leaving_the_workers_early_never_hangs() -> None:
    # multiprocessing.Pool.terminate() deadlocked after a few hundred such loads when the first
    # part declined while the rest were still queued (CI sat there until its own limit; this
    # test caught it in three runs of four). A separate process, so that a hang here is a
    # failure with a message, not a stalled suite.
    import subprocess
    import sys

    try:
        run = subprocess.run(
            [sys.executable, "-c", _DECLINE_OFTEN], capture_output=True, text=True, timeout=120
        )
    except subprocess.TimeoutExpired:
        pytest.fail("decoding parts in workers hung after a part declined")
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "done"


@settings(max_examples=500, deadline=None)
@given(
    st.text(alphabet='yYnNoOeEsSfFTtrRuUlLaA~<.+-_0123456789xXbBiI: "\n#', max_size=40),
    st.sampled_from([": ", "- ", ":  "]),
)
def test_the_risky_searches_find_what_they_found_without_the_first_character_lookahead(
    tail: str, lead: str
) -> None:
    """The lookahead only skips places where no alternative can start."""
    import re

    text = (lead + tail).encode()
    for compiled, body in [
        *(
            (fast, re.compile(p + yaml_screen._RISKY_SCALAR + rb"[ \t]*(?:#|\r?$)", re.MULTILINE))
            for fast, p in zip(yaml_screen._RISKY_YAML_VALUE, (rb": +", rb"- +"), strict=True)
        ),
        (yaml_screen.RISKY_JSON_KEY, re.compile(rb'"' + yaml_screen._RISKY_JSON_KEY_BODY + rb'":')),
    ]:
        for probe in (text, b'"' + tail.encode()):
            assert [m.span() for m in compiled.finditer(probe)] == [
                m.span() for m in body.finditer(probe)
            ]


@settings(max_examples=300, deadline=None)
@given(
    st.text(alphabet="- \na", max_size=80),
    st.integers(min_value=0, max_value=10),
    st.integers(min_value=0, max_value=80),
    st.integers(min_value=2, max_value=9),
)
def test_the_cuts_found_near_each_target_are_those_of_every_items_start(
    text: str, start: int, length: int, parts: int
) -> None:
    raw = text.encode()
    start = min(start, len(raw))
    if not raw.startswith(b"- ", start):
        return
    end = min(len(raw), start + length)
    every = yaml_split._line_starts(raw, b"- ", start, end)
    assert yaml_split._item_cuts(raw, start, end, parts) == yaml_split._cuts(every, end, parts)


@pytest.mark.parametrize("form", [kubectl_list, stream], ids=["a kubectl List", "a stream"])
def test_warnings_of_a_file_cut_in_parts_name_the_items_as_the_exact_path_does(
    form: Any, tiny_parts: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    from topospread.api.strict import FieldValidation, field_validation

    pods = [pod_manifest(i, {"app": "web"}) for i in range(12)]
    pods[7]["spec"]["nodeNam"] = "n1"  # an unknown field, in a later part
    text = form(pods)

    def warned() -> tuple[Any, list[str]]:
        said: list[str] = []
        with field_validation(FieldValidation.WARN, said.append) as found:
            result = outcome(text)
        assert said == found
        return result, list(found)

    fast = warned()
    assert tiny_parts and tiny_parts[0] > 2, "the text was not cut"
    with monkeypatch.context() as m:
        m.setattr(yaml_fast, "ryml", None)
        slow = warned()
    assert len(slow[1]) == 1 and "nodeNam" in slow[1][0]
    assert fast == slow


# The one-pattern search the fast path used before: the reference for the split search.
STRUCTURE_REFERENCE = re.compile(
    rb"(?:^|[\s\[{,])[&*!][^\s]|<<[ \t]*:|(?:^|\n)[ \t]*\?[ \t\r\n]", re.MULTILINE
)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(list(b"&*!?<:-, \t\r\n\f\v[{a1")), max_size=24).map(bytes))
def test_the_split_search_for_yaml_structure_finds_what_the_single_pattern_finds(
    text: bytes,
) -> None:
    expected = STRUCTURE_REFERENCE.search(text) is not None
    assert yaml_screen.has_yaml_structure(text) is expected


@pytest.mark.parametrize(
    ("text", "found"),
    [
        pytest.param(b"a: &x 1\nb: *x\n", True, id="an anchor and an alias"),
        pytest.param(b"a: !!str 1\n", True, id="a tag"),
        pytest.param(b"<<: {a: 1}\n", True, id="a merge key"),
        pytest.param(b"  ? a\n  : b\n", True, id="a complex key"),
        pytest.param(b"url: http://x/m?a=*&b=!\nglob: /var/*.log\n", False, id="a URL and a glob"),
    ],
)
def test_yaml_structure_is_found_only_where_it_is(text: bytes, found: bool) -> None:
    assert yaml_screen.has_yaml_structure(text) is found


LAST_APPLIED = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: |
      {"apiVersion":"apps/v1","kind":"Deployment","metadata":{"annotations":{},"name":"web"}}
  name: web
spec:
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: c
        image: nginx
"""
CSI_NODE = """\
apiVersion: v1
kind: Node
metadata:
  annotations:
    csi.volume.kubernetes.io/nodeid: '{"ebs.csi.aws.com":"i-0abc"}'
    note: "[\\"a\\"]"
  name: n1
"""


@pytest.mark.parametrize(
    "text",
    [
        pytest.param(LAST_APPLIED, id="last-applied JSON in a block scalar"),
        pytest.param(CSI_NODE, id="JSON in quoted annotations"),
        pytest.param(
            LAST_APPLIED.replace(
                "- name: c\n", "- name: c\n        args:\n        - |\n          a: on\n"
            ),
            id="a risky value in a block scalar",
        ),
    ],
)
def test_flow_text_in_scalars_keeps_the_fast_path(
    text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert yaml_fast.fast_yaml(text, "t.yaml") is not None
    assert outcome(text) == exact(text, monkeypatch)


SCALAR_LINES = ["{a: yes}", "[on, off]", "b: no", "- {x}", "plain", '{"k":"v"}', "[]", "  {y}", ""]
scalar_lines = st.sampled_from(SCALAR_LINES)


@settings(max_examples=150, deadline=None)
@given(
    lines=st.lists(scalar_lines, min_size=1, max_size=4),
    header=st.sampled_from(["|", ">", "|-", ">+", "|2"]),
    indent=st.sampled_from(["  ", "    ", "      "]),
    quoted=scalar_lines,
    after=st.sampled_from(
        ["labels: {a: web}", "labels: {a: yes}", "labels:\n    a: on", "labels:\n    a: web"]
    ),
)
def test_scalars_holding_flow_text_decode_the_same_either_way(
    lines: list[str], header: str, indent: str, quoted: str, after: str
) -> None:
    body = "".join(f"{indent}{line}\n" if line else "\n" for line in lines)
    text = (
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  annotations:\n"
        f"    q: '{quoted.replace(chr(39), chr(39) * 2)}'\n"
        f"    note: {header}\n{body}"
        f"  {after}\n"
    )
    saved_ryml = yaml_fast.ryml
    try:
        yaml_fast.ryml = None
        slow = outcome(text)
    finally:
        yaml_fast.ryml = saved_ryml
    assert outcome(text) == slow
    fast = yaml_fast.fast_yaml(text, "t.yaml")
    if fast is not None:  # where the fast path ran, YAML 1.1's booleans were not in play
        assert "yes" not in after and "on" not in after


@pytest.mark.parametrize("size", [0, 16, 4096], ids=["no room", "too little", "room"])
def test_json_is_emitted_whole_whatever_room_the_buffer_has(size: int) -> None:
    import ryml

    tree = ryml.parse_in_arena(b"a: [1, 2, 3]\nb: {c: 'd e'}\nf: |\n  g\n")
    expected = ryml.emit_json_malloc(tree, tree.root_id()).encode()
    assert yaml_fast._emit_json(tree, tree.root_id(), bytearray(size)) == expected


def test_a_directive_at_a_lines_start_declines_and_a_percent_sign_elsewhere_does_not() -> None:
    """``%YAML`` or ``%TAG`` at the start of any line (the text's first, or one after a
    newline) is left to the exact path; a ``%`` inside a value is plain text."""
    assert yaml_fast.fast_yaml("%YAML 1.1\n---\n" + pod_text(), "t.yaml") is None
    later = pod_text() + "...\n%YAML 1.1\n---\n" + pod_text(node="n2")
    assert yaml_fast.fast_yaml(later, "t.yaml") is None
    assert yaml_screen._DIRECTIVE.search(later.encode()) is not None
    percent = pod_text(labels="app: web\n    rate: 50%")
    fast = yaml_fast.fast_yaml(percent, "t.yaml")
    assert fast is not None and fast[0].metadata.labels["rate"] == "50%"


# ---------------------------------------------------------------------------------------------
# Parts decoded by this process and a worker together; the text around a cut List's items


def test_a_part_a_worker_declines_sends_the_whole_file_down_the_exact_path() -> None:
    ok = [b"apiVersion: v1\nkind: Pod\nmetadata:\n  name: p%d\n" % i for i in range(6)]
    risky = b"apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\n  labels:\n    app: yes\n"
    # The workers claim parts from the back, this process from the front.
    assert yaml_fast._fast_yaml_parallel([*ok, risky], 1) is None
    assert yaml_fast._fast_yaml_parallel([risky, *ok], 1) is None
    objs = yaml_fast._fast_yaml_parallel(list(ok), 2)
    assert objs is not None and [o.metadata.name for o in objs] == [f"p{i}" for i in range(6)]


@pytest.mark.parametrize(
    "tail",
    [
        pytest.param("kind: List\nmetadata: {resourceVersion: ''}\n", id="a well-formed tail"),
        pytest.param("kind: List\nmetadata: [a\n", id="an unclosed flow sequence"),
        pytest.param("kind: List\n- apiVersion: v1\n  kind: Pod\n", id="an item after the kind"),
        pytest.param("kind: List\nfoo: bar: baz\n", id="a mapping value in a value"),
        pytest.param("kind: List\nkind: List\n", id="a key twice"),
    ],
)
def test_the_text_around_a_cut_lists_items_is_read_as_the_exact_path_reads_it(
    tail: str, tiny_parts: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """No part holds a List's keys or its tail: YAML there that go-yaml refuses makes the
    whole file go down the exact path, as it did not before."""
    items = yaml.safe_dump([pod_manifest(i, {"app": "web"}) for i in range(12)])
    text = f"apiVersion: v1\nitems:\n{items}{tail}"
    fast = outcome(text)
    assert tiny_parts and tiny_parts[0] > 2, "the text was not cut"
    assert fast == exact(text, monkeypatch)


# Characters go-yaml's reader refuses: rapidyaml takes them, so the fast path must decline text
# that holds one, at any size, whole or cut in parts, and the exact path names it.
REFUSED = ["\x00", "\x07", "\x1b", "\x7f", "\x80", "\x9f", "\ufffe", "\uffff"]
TAKEN = ["\t", "é", "\x85", "\xa0", "\u2028", "\ufffd", "\U0001f600"]


@pytest.mark.parametrize("character", REFUSED, ids=[f"U+{ord(c):04X}" for c in REFUSED])
def test_a_character_go_yaml_refuses_is_found_in_any_text(character: str) -> None:
    text = ("plain ascii and some é " * 10 + character + " more").encode()
    assert not yaml_screen.printable(text)
    assert not yaml_screen.printable(character.encode())


@pytest.mark.parametrize("character", TAKEN, ids=[f"U+{ord(c):04X}" for c in TAKEN])
def test_characters_go_yaml_reads_are_let_through(character: str) -> None:
    assert yaml_screen.printable(("a: b" + character + "\r\n").encode())


@pytest.mark.parametrize("character", ["\x07", "\x9f", "\uffff"])
@pytest.mark.parametrize("form", [kubectl_list, stream], ids=["a kubectl List", "a stream"])
def test_a_large_file_holding_a_control_character_is_refused_as_go_yaml_refuses_it(
    character: str, form: Any, tiny_parts: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    pods = [pod_manifest(i, {"app": "web"}) for i in range(12)]
    pods[7]["metadata"]["annotations"] = {"note": "x"}
    text = form(pods).replace("note: x", f"note: x{character}y", 1)
    assert f"x{character}y" in text
    assert yaml_fast.fast_yaml(text, "t.yaml") is None
    refused = outcome(text)
    assert refused == exact(text, monkeypatch)
    assert refused[0] == "error" and "control characters are not allowed" in refused[1]


def test_a_large_file_without_one_keeps_the_fast_path(tiny_parts: list[int]) -> None:
    pods = [pod_manifest(i, {"app": "web", "note": "é"}) for i in range(12)]
    assert yaml_fast.fast_yaml(kubectl_list(pods), "t.yaml") is not None
