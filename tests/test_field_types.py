"""A value of the wrong JSON type in a field we never read is refused as the API server refuses
it: the strict decode's structs type every leaf from the Go sources (go_fields.json), and the
error is the one Go's decoder returns first (a plain type error in the order kubectl sends the
fields, unless a type's own UnmarshalJSON fails: a time, a quantity, base64), before any unknown
field, in strict and warn alike (the decoder fails before field validation is asked)."""

from __future__ import annotations

import json
import random
from typing import Any, Final

import msgspec
import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from test_loader_fast_path import exact, outcome
from test_type_errors import QUANTITY_FORMAT, replaced, unmarshal_error
from topospread.api import decode, strict
from topospread.api.go_values import (
    RFC3339_MICRO,
    go_base64_error,
    go_duration_error,
    go_time_error,
)
from topospread.api.loader import load_text
from topospread.api.strict import FieldValidation, field_validation
from topospread.errors import ManifestError

POD: Final = """\
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default}
spec:
  containers:
  - name: c
    image: nginx
"""
DEPLOYMENT: Final = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: c, image: nginx}]
"""
STATEFUL_SET: Final = """\
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: default}
spec:
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers: [{name: c, image: postgres}]
  volumeClaimTemplates:
  - metadata: {name: data}
    spec:
      accessModes: [ReadWriteOnce]
      resources: {requests: {storage: 1Gi}}
"""
NODE: Final = """\
apiVersion: v1
kind: Node
metadata: {name: n1}
spec: {}
status:
  allocatable: {cpu: "4", memory: 8Gi, pods: "110"}
  conditions:
  - {type: Ready, status: "True", lastHeartbeatTime: "2025-06-01T12:00:00Z"}
"""
CLAIM: Final = """\
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data, namespace: default}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
"""
CONFIG_MAP: Final = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: default}
data: {a: x}
"""
SECRET: Final = """\
apiVersion: v1
kind: Secret
metadata: {name: token, namespace: default}
data: {k: aGVsbG8=}
"""
LEASE: Final = """\
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata: {name: l, namespace: default}
spec: {holderIdentity: a}
"""


def _label(text: str) -> str:
    obj = yaml.safe_load(text)
    meta = obj["metadata"]
    name = f"{meta['namespace']}/{meta['name']}" if "namespace" in meta else meta["name"]
    return f"({obj['kind']} {name})"


# name: (manifest, the message after "t.yaml (<Kind> <name>): ")
WRONG: Final = {
    "Pod terminationGracePeriodSeconds a word": (
        replaced(POD, "spec:\n", "spec:\n  terminationGracePeriodSeconds: abc\n"),
        unmarshal_error("string", "PodSpec.spec.terminationGracePeriodSeconds", "int64"),
    ),
    "Pod activeDeadlineSeconds a fraction": (
        replaced(POD, "spec:\n", "spec:\n  activeDeadlineSeconds: 1.5\n"),
        unmarshal_error("number 1.5", "PodSpec.spec.activeDeadlineSeconds", "int64"),
    ),
    "Pod dnsPolicy a number (a named string type)": (
        replaced(POD, "spec:\n", "spec:\n  dnsPolicy: 5\n"),
        unmarshal_error("number", "PodSpec.spec.dnsPolicy", "v1.DNSPolicy"),
    ),
    "Pod securityContext a number (a struct)": (
        replaced(POD, "spec:\n", "spec:\n  securityContext: 5\n"),
        unmarshal_error("number", "PodSpec.spec.securityContext", "v1.PodSecurityContext"),
    ),
    "Pod container imagePullPolicy a boolean": (
        replaced(POD, "    image: nginx\n", "    image: nginx\n    imagePullPolicy: true\n"),
        unmarshal_error("bool", "Container.spec.containers.imagePullPolicy", "v1.PullPolicy"),
    ),
    "Pod container args holding a number (a list's item)": (
        replaced(POD, "    image: nginx\n", "    image: nginx\n    args: [run, 1]\n"),
        unmarshal_error("number", "Container.spec.containers.args", "string"),
    ),
    "Pod env value a number (a list of structs)": (
        replaced(POD, "    image: nginx\n", "    image: nginx\n    env: [{name: A, value: 1}]\n"),
        unmarshal_error("number", "EnvVar.spec.containers.env.value", "string"),
    ),
    "Pod label value a number (a field we read)": (
        replaced(
            POD, "{name: p, namespace: default}", "{name: p, namespace: default, labels: {a: 1}}"
        ),
        unmarshal_error("number", "ObjectMeta.metadata.labels", "string"),
    ),
    "Pod emptyDir sizeLimit a word (a quantity)": (
        replaced(POD, "spec:\n", "spec:\n  volumes: [{name: v, emptyDir: {sizeLimit: lots}}]\n"),
        f'spec.volumes[0].emptyDir.sizeLimit: Invalid value: "lots": {QUANTITY_FORMAT}',
    ),
    "Pod creationTimestamp a word": (
        replaced(POD, "namespace: default}", "namespace: default, creationTimestamp: yesterday}"),
        'parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": '
        'cannot parse "yesterday" as "2006"',
    ),
    "Pod creationTimestamp in month 13": (
        replaced(
            POD,
            "namespace: default}",
            "namespace: default, creationTimestamp: '2025-13-01T00:00:00Z'}",
        ),
        'parsing time "2025-13-01T00:00:00Z": month out of range',
    ),
    "Pod creationTimestamp a lower-case t": (
        replaced(
            POD,
            "namespace: default}",
            "namespace: default, creationTimestamp: '2025-01-01t00:00:00Z'}",
        ),
        'parsing time "2025-01-01t00:00:00Z" as "2006-01-02T15:04:05Z07:00": '
        'cannot parse "t00:00:00Z" as "T"',
    ),
    "Pod creationTimestamp a number": (
        replaced(POD, "namespace: default}", "namespace: default, creationTimestamp: 5}"),
        unmarshal_error("number", "ObjectMeta.metadata.creationTimestamp", "string"),
    ),
    "Deployment template hostIPC a quoted boolean": (
        replaced(DEPLOYMENT, "      containers:", "      hostIPC: 'true'\n      containers:"),
        unmarshal_error("string", "PodSpec.spec.template.spec.hostIPC", "bool"),
    ),
    "Deployment progressDeadlineSeconds beyond int32": (
        replaced(
            DEPLOYMENT, "  replicas: 2\n", "  replicas: 2\n  progressDeadlineSeconds: 3000000000\n"
        ),
        unmarshal_error(
            "number 3000000000", "DeploymentSpec.spec.progressDeadlineSeconds", "int32"
        ),
    ),
    "StatefulSet claim template volumeMode a number": (
        replaced(STATEFUL_SET, "      accessModes:", "      volumeMode: 5\n      accessModes:"),
        unmarshal_error(
            "number",
            "PersistentVolumeClaimSpec.spec.volumeClaimTemplates.spec.volumeMode",
            "v1.PersistentVolumeMode",
        ),
    ),
    "Node podCIDRs a string": (
        replaced(NODE, "spec: {}", "spec: {podCIDRs: 10.0.0.0/24}"),
        unmarshal_error("string", "NodeSpec.spec.podCIDRs", "[]string"),
    ),
    "Node kubeletVersion a number": (
        replaced(NODE, "status:\n", "status:\n  nodeInfo: {kubeletVersion: 1}\n"),
        unmarshal_error("number", "NodeSystemInfo.status.nodeInfo.kubeletVersion", "string"),
    ),
    "Node condition heartbeat on February 30": (
        replaced(NODE, "2025-06-01T12:00:00Z", "2025-02-30T12:00:00Z"),
        'parsing time "2025-02-30T12:00:00Z": day out of range',
    ),
    "PVC dataSourceRef namespace a number": (
        replaced(CLAIM, "spec:\n", "spec:\n  dataSourceRef: {kind: Snap, name: s, namespace: 1}\n"),
        unmarshal_error("number", "TypedObjectReference.spec.dataSourceRef.namespace", "string"),
    ),
    "ConfigMap data value a number (a map's value)": (
        replaced(CONFIG_MAP, "{a: x}", "{a: x, b: 1}"),
        unmarshal_error("number", "ConfigMap.data", "string"),
    ),
    "ConfigMap immutable a word": (
        CONFIG_MAP + "immutable: yes please\n",
        unmarshal_error("string", "ConfigMap.immutable", "bool"),
    ),
    "ConfigMap binaryData not base64": (
        CONFIG_MAP + "binaryData: {b: '!!'}\n",
        "illegal base64 data at input byte 0",
    ),
    "Secret data cut short": (
        replaced(SECRET, "aGVsbG8=", "aGVsbG8"),
        "illegal base64 data at input byte 4",
    ),
    "Secret data a list": (
        replaced(SECRET, "aGVsbG8=", "[1]"),
        unmarshal_error("array", "Secret.data", "[]uint8"),
    ),
    "Lease renewTime without microseconds (a MicroTime)": (
        replaced(
            LEASE, "holderIdentity: a", "holderIdentity: a, renewTime: '2025-01-01T00:00:00Z'"
        ),
        'parsing time "2025-01-01T00:00:00Z" as "2006-01-02T15:04:05.000000Z07:00": '
        'cannot parse "Z" as ".000000"',
    ),
    "Lease leaseDurationSeconds a fraction": (
        replaced(LEASE, "holderIdentity: a", "holderIdentity: a, leaseDurationSeconds: 2.5"),
        unmarshal_error("number 2.5", "LeaseSpec.spec.leaseDurationSeconds", "int32"),
    ),
}


@pytest.mark.parametrize("name", list(WRONG))
def test_a_wrong_value_in_any_field_is_the_api_servers_decode_error(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    text, message = WRONG[name]
    expected = ("error", f"t.yaml {_label(text)}: {message}")
    assert outcome(text) == expected
    assert exact(text, monkeypatch) == expected
    as_json = json.dumps(yaml.load(text, Loader=yaml.SafeLoader))
    assert outcome(as_json) == expected
    with field_validation(FieldValidation.WARN):  # a decode error, not a strict one
        assert outcome(text) == expected


# Forms msgspec's RFC 3339 parser takes, which no API server writes (see strict._MACHINE_SHAPES).
NO_SERVER_WRITES: Final = {"Pod creationTimestamp a lower-case t"}


@pytest.mark.parametrize("name", [name for name in WRONG if name not in NO_SERVER_WRITES])
def test_machine_written_files_refuse_the_same_values_with_the_same_words(name: str) -> None:
    text, message = WRONG[name]
    obj = yaml.load(text, Loader=yaml.SafeLoader)
    big = {"apiVersion": "v1", "kind": "List", "items": [*[_filler(i) for i in range(2500)], obj]}
    raw = json.dumps(big, indent=1)
    assert len(raw) > decode.SMALL_TEXT_BYTES
    with pytest.raises(ManifestError) as caught:
        load_text(raw, "big.json")
    assert str(caught.value) == f"big.json: items[2500] {_label(text)}: {message}"


def _filler(i: int) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": f"c{i}", "namespace": "default"},
        "data": {"key": "x" * 400},
    }


GOOD_TIMES: Final = [
    "2025-06-01T12:00:00Z",
    "2025-06-01T12:00:00.5Z",
    "2025-06-01T12:00:00.123456789+05:30",
    "2025-06-01T12:00:00,25-08:00",
    "2025-06-01T1:00:00Z",
    "2024-02-29T23:59:59Z",
    "2025-06-01T12:00:00+24:00",
    "0000-01-01T00:00:00Z",
]


@pytest.mark.parametrize("when", GOOD_TIMES)
def test_every_time_go_parses_is_taken(when: str, monkeypatch: pytest.MonkeyPatch) -> None:
    text = replaced(
        POD, "namespace: default}", f"namespace: default, creationTimestamp: '{when}'}}"
    )
    (pod,) = outcome(text)
    assert pod["metadata"]["creationTimestamp"] == when
    assert exact(text, monkeypatch) == [pod]
    big = json.dumps(
        {"apiVersion": "v1", "kind": "List", "items": [_filler(0)] * 2500 + [yaml.safe_load(text)]}
    )
    assert len(load_text(big, "big.json")) == 2501


def test_a_type_error_wins_over_unknown_fields_and_goes_unreported_under_ignore() -> None:
    text = replaced(POD, "spec:\n", "spec:\n  zzz: 1\n  aaa: 2\n  activeDeadlineSeconds: x\n")
    message = unmarshal_error("string", "PodSpec.spec.activeDeadlineSeconds", "int64")
    assert outcome(text) == ("error", f"t.yaml (Pod default/p): {message}")
    with field_validation(FieldValidation.WARN) as warnings:
        assert outcome(text) == ("error", f"t.yaml (Pod default/p): {message}")
    assert warnings == []
    fixed = text.replace("activeDeadlineSeconds: x", "activeDeadlineSeconds: 5")
    assert outcome(fixed)[0] == "error" and "strict decoding error" in outcome(fixed)[1]
    with field_validation(FieldValidation.IGNORE):
        (pod,) = outcome(text)  # NOTE: ignore checks nothing (see strict.check_object)
    assert pod["metadata"]["name"] == "p"


def test_the_first_type_error_in_go_order_is_named_unless_an_unmarshaler_fails() -> None:
    # Fields are read sorted (kubectl sends them so): activeDeadlineSeconds before hostIPC.
    two = replaced(POD, "spec:\n", "spec:\n  hostIPC: x\n  activeDeadlineSeconds: x\n")
    assert outcome(two)[1].endswith(
        unmarshal_error("string", "PodSpec.spec.activeDeadlineSeconds", "int64")
    )
    # A quantity's own error stops the decoder, after a plain type error read earlier.
    custom = replaced(two, "spec:\n", "spec:\n  volumes: [{name: v, emptyDir: {sizeLimit: x}}]\n")
    assert outcome(custom)[1].endswith(
        f'spec.volumes[0].emptyDir.sizeLimit: Invalid value: "x": {QUANTITY_FORMAT}'
    )
    # metadata is read before spec: its bad time is what the server names.
    early = replaced(two, "namespace: default}", "namespace: default, creationTimestamp: x}")
    assert 'parsing time "x"' in outcome(early)[1]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("x", 'time: invalid duration "x"'),
        ("", 'time: invalid duration ""'),
        ("1", 'time: missing unit in duration "1"'),
        ("1d", 'time: unknown unit "d" in duration "1d"'),
        ("1h30m", None),
        ("-1.5h", None),
        ("0", None),
    ],
)
def test_durations_as_time_parse_duration_says(text: str, message: str | None) -> None:
    assert go_duration_error(text) == message


def test_micro_times_need_their_six_digits() -> None:
    assert go_time_error("2025-01-01T00:00:00.123456Z", RFC3339_MICRO) is None
    assert go_time_error("2025-01-01T00:00:00.12345Z", RFC3339_MICRO) == (
        'parsing time "2025-01-01T00:00:00.12345Z" as "2006-01-02T15:04:05.000000Z07:00": '
        'cannot parse ".12345Z" as ".000000"'
    )


def test_base64_as_go_decodes_it() -> None:
    assert go_base64_error("aGVs\nbG8=") is None  # newlines are skipped
    assert go_base64_error("aGV=") is None
    assert go_base64_error("aGVsbG8=x") == "illegal base64 data at input byte 8"


_TIME_CHARS: Final = "0123456789-:T.Z+tz ,"


@given(
    st.sampled_from(GOOD_TIMES),
    st.lists(st.tuples(st.integers(0, 40), st.sampled_from(_TIME_CHARS), st.booleans())),
)
def test_msgspecs_time_check_refuses_what_go_refuses_but_four_forms(
    base: str, edits: list[tuple[int, str, bool]]
) -> None:
    """The machine-written structs check times with msgspec's RFC 3339 parser (see strict.py):
    whatever it takes and Go refuses has "t" or " " for "T", "z" for "Z", or a "+hhmm" zone."""
    chars = list(base)
    for at, char, insert in edits:
        if insert:
            chars.insert(min(at, len(chars)), char)
        elif chars:
            chars[min(at, len(chars) - 1)] = char
    text = "".join(chars)
    decoder = msgspec.json.Decoder(strict._MACHINE_SHAPES["Time"])
    try:
        decoder.decode(json.dumps(text).encode())
    except msgspec.ValidationError:
        return
    if go_time_error(text) is not None:
        lenient = text[10:11] in ("t", " ") or text.endswith("z") or text[-5:-4] in ("+", "-")
        assert lenient, text


def test_every_leaf_of_the_built_in_kinds_we_decode_has_its_go_type() -> None:
    structs, fields = strict.go_fields()
    for kind in ("V1Pod", "V1Node", "V1Deployment", "V1StatefulSet", "V1PersistentVolumeClaim"):
        todo, seen = [kind], set()
        while todo:
            name = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            assert name in structs, name
            for key, ref in strict.schema_types()[name].items():
                assert key in fields[name], (name, key)
                inner = (
                    ref["*"] if isinstance(ref, dict) else ref[0] if isinstance(ref, list) else ref
                )
                if inner is not None:
                    todo.append(inner)


def test_go_fields_json_is_deterministic_data() -> None:
    # Regenerated by scripts/gen_go_types.py; sorted keys keep diffs small.
    _, fields = strict.go_fields()
    for name in random.Random(0).sample(sorted(fields), 20):
        assert list(fields[name]) == sorted(fields[name])
