"""What kube-apiserver v1.35 refuses on create in a pod's (or a pod template's) seccomp and
AppArmor profiles and ephemeral containers: the profile fields themselves, the deprecated
annotations against those fields, and ephemeral containers, which no pod may be created with
and no template may hold. Exact messages and paths, upstream's order, and one line and exit 2
from the command line, for a pod and for every workload kind's template.

A pod's AppArmor annotation is first copied into its container's empty field (PrepareForCreate's
version skew), so it only has to agree with a field the container sets itself; a template is
validated as written, so its annotation must agree with the pod-level field too.

Rows follow TestValidateSeccompAnnotationsAndFields, TestValidateAppArmorProfileFormat,
TestValidatePodCreateWithSchedulingGates-style cases of core validation_test.go and
TestApplyAppArmorVersionSkew of pkg/registry/core/pod/strategy_test.go (v1.35).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Final

import msgspec
import pytest

from test_bad_input import GOOD_NODE, assert_manifest_refused, assert_one_line_exit_2, write_text
from topospread.api.types import Pod
from topospread.api.validation import validate_pod

SECCOMP: Final = "seccomp.security.alpha.kubernetes.io/pod"
SECCOMP_C: Final = "container.seccomp.security.alpha.kubernetes.io/c"
SECCOMP_I: Final = "container.seccomp.security.alpha.kubernetes.io/i"
APPARMOR_C: Final = "container.apparmor.security.beta.kubernetes.io/c"

POD_SECCOMP: Final = "spec.securityContext.seccompProfile"
C_SECCOMP: Final = "spec.containers[0].securityContext.seccompProfile"
I_SECCOMP: Final = "spec.initContainers[0].securityContext.seccompProfile"
POD_APPARMOR: Final = "spec.securityContext.appArmorProfile"
C_APPARMOR: Final = "spec.containers[0].securityContext.appArmorProfile"

SECCOMP_TYPE: Final = (
    f"{POD_SECCOMP}.type: Forbidden: seccomp type in annotation and field must match"
)
SECCOMP_PROFILE: Final = (
    f"{POD_SECCOMP}.localhostProfile: Forbidden: seccomp profile in annotation and field must match"
)
APPARMOR_TYPE: Final = (
    f"{C_APPARMOR}.type: Forbidden: apparmor type in annotation and field must match"
)
APPARMOR_PROFILE: Final = (
    f"{C_APPARMOR}.localhostProfile: Forbidden: apparmor profile in annotation and field must match"
)
ON_CREATE: Final = "spec.ephemeralContainers: Forbidden: cannot be set on create"
IN_TEMPLATE: Final = (
    "spec.ephemeralContainers: Forbidden: ephemeral containers not allowed in pod template"
)


def profile(kind: str, local: str | None = None) -> dict[str, str]:
    return {"type": kind} if local is None else {"type": kind, "localhostProfile": local}


def pod_doc(
    annotations: dict[str, str] | None = None,
    pod_context: dict[str, Any] | None = None,
    container_context: dict[str, Any] | None = None,
    **spec: Any,
) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "c", "image": "nginx"}
    if container_context is not None:
        container["securityContext"] = container_context
    doc_spec: dict[str, Any] = {"containers": [container], **spec}
    if pod_context is not None:
        doc_spec["securityContext"] = pod_context
    meta = {"name": "p", "namespace": "default", "annotations": annotations or {}}
    return {"metadata": meta, "spec": doc_spec}


def messages(doc: dict[str, Any], *, from_template: bool = False) -> list[str]:
    pod = msgspec.convert(doc, Pod)
    return [str(e) for e in validate_pod(pod, from_template=from_template)]


# (the pod, its messages as a pod, its messages as a template: None when the same).
Row = tuple[dict[str, Any], list[str], list[str] | None]

SECCOMP_ROWS: Final[dict[str, Row]] = {
    "the pod's annotation and field agree: runtime/default": (
        pod_doc({SECCOMP: "runtime/default"}, {"seccompProfile": profile("RuntimeDefault")}),
        [],
        None,
    ),
    "docker/default stands for RuntimeDefault": (
        pod_doc({SECCOMP: "docker/default"}, {"seccompProfile": profile("RuntimeDefault")}),
        [],
        None,
    ),
    "unconfined and Unconfined": (
        pod_doc({SECCOMP: "unconfined"}, {"seccompProfile": profile("Unconfined")}),
        [],
        None,
    ),
    "localhost and Localhost, the same profile": (
        pod_doc({SECCOMP: "localhost/a.json"}, {"seccompProfile": profile("Localhost", "a.json")}),
        [],
        None,
    ),
    "the annotation alone": (pod_doc({SECCOMP: "unconfined"}), [], None),
    "the field alone": (pod_doc(None, {"seccompProfile": profile("Unconfined")}), [], None),
    "runtime/default against Unconfined (the known gap)": (
        pod_doc({SECCOMP: "runtime/default"}, {"seccompProfile": profile("Unconfined")}),
        [SECCOMP_TYPE],
        None,
    ),
    "unconfined against RuntimeDefault": (
        pod_doc({SECCOMP: "unconfined"}, {"seccompProfile": profile("RuntimeDefault")}),
        [SECCOMP_TYPE],
        None,
    ),
    "runtime/default against Localhost": (
        pod_doc({SECCOMP: "runtime/default"}, {"seccompProfile": profile("Localhost", "a")}),
        [SECCOMP_TYPE],
        None,
    ),
    "another localhost profile": (
        pod_doc({SECCOMP: "localhost/b"}, {"seccompProfile": profile("Localhost", "a")}),
        [SECCOMP_PROFILE],
        None,
    ),
    "a container's annotation against its own field": (
        pod_doc({SECCOMP_C: "unconfined"}, None, {"seccompProfile": profile("RuntimeDefault")}),
        [f"{C_SECCOMP}.type: Forbidden: seccomp type in annotation and field must match"],
        None,
    ),
    "a container's annotation is not compared with the pod-level field": (
        pod_doc({SECCOMP_C: "unconfined"}, {"seccompProfile": profile("RuntimeDefault")}),
        [],
        None,
    ),
    "the pod's annotation is not compared with a container's field": (
        pod_doc({SECCOMP: "unconfined"}, None, {"seccompProfile": profile("RuntimeDefault")}),
        [],
        None,
    ),
    "an init container's, before the containers' (VisitContainersWithPath's order)": (
        pod_doc(
            {SECCOMP_I: "unconfined", SECCOMP_C: "unconfined"},
            None,
            {"seccompProfile": profile("Localhost", "x")},
            initContainers=[
                {
                    "name": "i",
                    "image": "busybox",
                    "securityContext": {"seccompProfile": profile("RuntimeDefault")},
                }
            ],
        ),
        [
            f"{I_SECCOMP}.type: Forbidden: seccomp type in annotation and field must match",
            f"{C_SECCOMP}.type: Forbidden: seccomp type in annotation and field must match",
        ],
        None,
    ),
}

APPARMOR_ROWS: Final[dict[str, Row]] = {
    "the annotation and the container's field agree": (
        pod_doc({APPARMOR_C: "localhost/p"}, None, {"appArmorProfile": profile("Localhost", "p")}),
        [],
        None,
    ),
    "the annotation alone": (pod_doc({APPARMOR_C: "runtime/default"}), [], None),
    "the field alone": (pod_doc(None, {"appArmorProfile": profile("Unconfined")}), [], None),
    "the container's field disagrees: refused for a pod too": (
        pod_doc({APPARMOR_C: "runtime/default"}, None, {"appArmorProfile": profile("Unconfined")}),
        [APPARMOR_TYPE],
        None,
    ),
    "another localhost profile in the container's field": (
        pod_doc({APPARMOR_C: "localhost/q"}, None, {"appArmorProfile": profile("Localhost", "p")}),
        [APPARMOR_PROFILE],
        None,
    ),
    "the container's field, not the pod-level one, is compared": (
        pod_doc(
            {APPARMOR_C: "unconfined"},
            {"appArmorProfile": profile("RuntimeDefault")},
            {"appArmorProfile": profile("Unconfined")},
        ),
        [],
        None,
    ),
    "the pod-level field disagrees: a pod's annotation is copied, a template's refused": (
        pod_doc({APPARMOR_C: "runtime/default"}, {"appArmorProfile": profile("Unconfined")}),
        [],
        [APPARMOR_TYPE],
    ),
    "the pod-level field agrees: nothing copied, nothing refused": (
        pod_doc({APPARMOR_C: "localhost/p"}, {"appArmorProfile": profile("Localhost", "p")}),
        [],
        None,
    ),
    "an empty localhost profile is not copied: compared with the pod-level field": (
        pod_doc({APPARMOR_C: "localhost/"}, {"appArmorProfile": profile("Localhost", "p")}),
        [APPARMOR_PROFILE],
        None,
    ),
    "a padded localhost profile is not copied (its field would be invalid)": (
        pod_doc({APPARMOR_C: "localhost/ p"}, {"appArmorProfile": profile("RuntimeDefault")}),
        [APPARMOR_TYPE],
        None,
    ),
    "a Windows pod is not compared (its fields are refused for themselves)": (
        pod_doc(
            {APPARMOR_C: "runtime/default"},
            {"appArmorProfile": profile("Unconfined")},
            {"appArmorProfile": profile("Unconfined")},
            os={"name": "windows"},
        ),
        [
            f"{POD_APPARMOR}: Forbidden: cannot be set for a windows pod",
            f"{C_APPARMOR}: Forbidden: cannot be set for a windows pod",
        ],
        None,
    ),
    "a Windows pod's annotation alone": (
        pod_doc({APPARMOR_C: "runtime/default"}, os={"name": "windows"}),
        [],
        None,
    ),
    "a Linux pod is": (
        pod_doc(
            {APPARMOR_C: "runtime/default"},
            None,
            {"appArmorProfile": profile("Unconfined")},
            os={"name": "linux"},
        ),
        [APPARMOR_TYPE],
        None,
    ),
}


@pytest.mark.parametrize("name", list(SECCOMP_ROWS) + list(APPARMOR_ROWS))
def test_profile_annotations_and_fields_must_agree_as_the_api_server_requires(name: str) -> None:
    doc, as_pod, as_template = {**SECCOMP_ROWS, **APPARMOR_ROWS}[name]
    assert messages(doc) == as_pod
    assert messages(doc, from_template=True) == (as_pod if as_template is None else as_template)


FIELD_ROWS: Final[dict[str, tuple[dict[str, Any], list[str]]]] = {
    "seccomp: no type": (
        {"seccompProfile": {}},
        [f"{POD_SECCOMP}.type: Required value: type is required when seccompProfile is set"],
    ),
    "seccomp: an unknown type": (
        {"seccompProfile": profile("Default")},
        [
            f'{POD_SECCOMP}.type: Unsupported value: "Default": supported values: "Localhost", '
            '"RuntimeDefault", "Unconfined"'
        ],
    ),
    "seccomp: Localhost without a profile": (
        {"seccompProfile": profile("Localhost")},
        [
            f"{POD_SECCOMP}.localhostProfile: Required value: must be set when seccomp type is "
            "Localhost"
        ],
    ),
    "seccomp: a profile outside the profiles' directory": (
        {"seccompProfile": profile("Localhost", "../x")},
        [f"{POD_SECCOMP}.localhostProfile: Invalid value: \"../x\": must not contain '..'"],
    ),
    "seccomp: a profile with another type (the whole struct printed)": (
        {"seccompProfile": profile("RuntimeDefault", "a<b")},
        [
            f'{POD_SECCOMP}.localhostProfile: Invalid value: {{"Type":"RuntimeDefault",'
            '"LocalhostProfile":"a\\u003cb"}: can only be set when seccomp type is Localhost'
        ],
    ),
    "apparmor: no type": (
        {"appArmorProfile": {}},
        [f"{POD_APPARMOR}.type: Required value: type is required when appArmorProfile is set"],
    ),
    "apparmor: an unknown type": (
        {"appArmorProfile": profile("Enforce")},
        [
            f'{POD_APPARMOR}.type: Unsupported value: "Enforce": supported values: '
            '"Localhost", "RuntimeDefault", "Unconfined"'
        ],
    ),
    "apparmor: Localhost without a profile": (
        {"appArmorProfile": profile("Localhost")},
        [
            f"{POD_APPARMOR}.localhostProfile: Required value: must be set when AppArmor type "
            "is Localhost"
        ],
    ),
    "apparmor: an empty profile": (
        {"appArmorProfile": profile("Localhost", "")},
        [
            f"{POD_APPARMOR}.localhostProfile: Required value: must be set when AppArmor type "
            "is Localhost"
        ],
    ),
    "apparmor: a padded profile": (
        {"appArmorProfile": profile("Localhost", " p\t")},
        [
            f'{POD_APPARMOR}.localhostProfile: Invalid value: " p\\t": must not be padded with '
            "whitespace"
        ],
    ),
    "apparmor: a profile of 4096 bytes": (
        {"appArmorProfile": profile("Localhost", "é" * 2048)},
        [f"{POD_APPARMOR}.localhostProfile: Too long: may not be more than 4095 bytes"],
    ),
    "apparmor: a profile of 4095 bytes": (
        {"appArmorProfile": profile("Localhost", "p" * 4095)},
        [],
    ),
    "apparmor: a profile with another type (the pointer printed)": (
        {"appArmorProfile": profile("Unconfined", "p")},
        [
            f'{POD_APPARMOR}.localhostProfile: Invalid value: "p": can only be set when AppArmor '
            "type is Localhost"
        ],
    ),
    "both, seccomp first": (
        {"appArmorProfile": {}, "seccompProfile": {}},
        [
            f"{POD_SECCOMP}.type: Required value: type is required when seccompProfile is set",
            f"{POD_APPARMOR}.type: Required value: type is required when appArmorProfile is set",
        ],
    ),
}


OS_ROWS: Final[dict[str, tuple[dict[str, Any], list[str]]]] = {
    "linux": (
        pod_doc(None, {"seccompProfile": profile("RuntimeDefault")}, os={"name": "linux"}),
        [],
    ),
    "no name": (pod_doc(os={}), ["spec.os.name: Required value: cannot be empty"]),
    "an unknown name (the path is spec.os)": (
        pod_doc(os={"name": "Linux"}),
        ['spec.os: Unsupported value: "Linux": supported values: "linux", "windows"'],
    ),
    "windows: no profile anywhere, the pod's first, init containers before containers": (
        pod_doc(
            None,
            {"seccompProfile": profile("RuntimeDefault"), "appArmorProfile": {}},
            {"seccompProfile": profile("RuntimeDefault")},
            os={"name": "windows"},
            initContainers=[
                {
                    "name": "i",
                    "image": "busybox",
                    "securityContext": {"appArmorProfile": profile("RuntimeDefault")},
                }
            ],
        ),
        [
            f"{POD_APPARMOR}.type: Required value: type is required when appArmorProfile is set",
            f"{POD_APPARMOR}: Forbidden: cannot be set for a windows pod",
            f"{POD_SECCOMP}: Forbidden: cannot be set for a windows pod",
            "spec.initContainers[0].securityContext.appArmorProfile: Forbidden: cannot be set "
            "for a windows pod",
            f"{C_SECCOMP}: Forbidden: cannot be set for a windows pod",
        ],
    ),
}


@pytest.mark.parametrize("name", list(OS_ROWS))
def test_the_pods_os_is_checked_as_validatepodspec_checks_it(name: str) -> None:
    doc, expected = OS_ROWS[name]
    assert messages(doc) == expected
    assert messages(doc, from_template=True) == expected


@pytest.mark.parametrize("name", list(FIELD_ROWS))
def test_a_profile_field_is_refused_as_the_api_server_refuses_it(name: str) -> None:
    context, expected = FIELD_ROWS[name]
    assert messages(pod_doc(None, context)) == expected
    in_container = [m.replace("spec.securityContext", "spec.containers[0].securityContext")
                    for m in expected]  # fmt: skip
    assert messages(pod_doc(None, None, context)) == in_container


def test_the_profile_fields_are_checked_where_validatepodspec_checks_them() -> None:
    """A container's after its resources; the pod-level ones after the node selector and
    before the affinity."""
    doc = pod_doc(
        None,
        {"seccompProfile": {}},
        {"seccompProfile": {}},
        nodeSelector={"a/b/c": "x"},
        affinity={"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{}]}},
    )
    doc["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "-1"}}
    found = [m.split(":")[0] for m in messages(doc)]
    assert found[:4] == [
        "spec.containers[0].resources.requests[cpu]",
        f"{C_SECCOMP}.type",
        "spec.nodeSelector",
        f"{POD_SECCOMP}.type",
    ]
    assert found[4:] and all(m.startswith("spec.affinity.podAffinity") for m in found[4:])


def test_a_mismatch_is_told_after_every_error_of_the_spec() -> None:
    doc = pod_doc(
        {SECCOMP: "unconfined"},
        {"seccompProfile": profile("RuntimeDefault")},
        tolerations=[{"key": "k", "operator": "Sometimes"}],
    )
    found = messages(doc)
    assert found[0].startswith("spec.tolerations[0].operator: Unsupported value")
    assert found[1:] == [SECCOMP_TYPE]


EPHEMERAL: Final = {"name": "debug", "image": "busybox"}


def test_ephemeral_containers_are_refused_on_create_and_in_a_template() -> None:
    doc = pod_doc(ephemeralContainers=[EPHEMERAL])
    assert messages(doc) == [ON_CREATE]
    assert messages(doc, from_template=True) == [IN_TEMPLATE]


def test_a_bound_pods_ephemeral_containers_are_kept_as_a_clusters_pods_hold_them() -> None:
    """A bound pod is read back from a cluster: ``kubectl debug`` added its ephemeral
    containers to the running pod (the ephemeralcontainers subresource), which the server
    allows; an unbound one with the same containers is still refused."""
    bound = pod_doc(ephemeralContainers=[EPHEMERAL], nodeName="n1")
    assert messages(bound) == []
    assert messages(pod_doc(ephemeralContainers=[EPHEMERAL])) == [ON_CREATE]
    assert messages(bound, from_template=True) == [IN_TEMPLATE]


def test_a_template_pod_admitted_bound_does_not_vouch_for_its_unbound_twin(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two pods alike but for nodeName: admission's memo, keyed per template, must not carry
    the bound one's verdict over to the unbound one."""

    def pod(name: str, node: str | None) -> dict[str, Any]:
        doc = pod_doc(ephemeralContainers=[EPHEMERAL], **({"nodeName": node} if node else {}))
        doc["metadata"]["name"] = name
        return {"apiVersion": "v1", "kind": "Pod", **doc}

    pods = write_text(
        tmp_path,
        "pods.yaml",
        "\n---\n".join(json.dumps(d) for d in (pod("a", "n1"), pod("b", None))),
    )
    nodes = write_text(tmp_path, "nodes.yaml", GOOD_NODE)
    argv = ["schedule", "--nodes", nodes, "--pods", pods]
    assert_one_line_exit_2(argv, capsys, f"(Pod default/b): {ON_CREATE}")


def test_an_ephemeral_containers_own_errors_come_first() -> None:
    bad = [
        {"name": "c", "image": " busybox", "targetContainerName": "nope"},
        {"name": "Debug", "securityContext": {"seccompProfile": {}}},
    ]
    doc = pod_doc(ephemeralContainers=bad)
    own = [
        'spec.ephemeralContainers[0].image: Invalid value: " busybox": must not have leading or '
        "trailing whitespace",
        'spec.ephemeralContainers[0].name: Duplicate value: "c"',
        'spec.ephemeralContainers[0].targetContainerName: Not found: "nope"',
        'spec.ephemeralContainers[1].name: Invalid value: "Debug": a lowercase RFC 1123 label '
        "must consist of lower case alphanumeric characters or '-', and must start and end with "
        "an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
        "spec.ephemeralContainers[1].image: Required value",
        "spec.ephemeralContainers[1].securityContext.seccompProfile.type: Required value: type "
        "is required when seccompProfile is set",
    ]
    assert messages(doc) == [*own, ON_CREATE]
    assert messages(doc, from_template=True) == [*own, IN_TEMPLATE]


def test_an_ephemeral_containers_annotations_are_compared_and_named() -> None:
    """Its AppArmor annotation names a container of the pod, and is compared with its field."""
    ephemeral = {**EPHEMERAL, "securityContext": {"appArmorProfile": profile("Unconfined")}}
    key = "container.apparmor.security.beta.kubernetes.io/debug"
    doc = pod_doc({key: "runtime/default"}, ephemeralContainers=[ephemeral])
    at = "spec.ephemeralContainers[0].securityContext.appArmorProfile.type"
    mismatch = f"{at}: Forbidden: apparmor type in annotation and field must match"
    assert messages(doc) == [ON_CREATE, mismatch]
    assert messages(doc, from_template=True) == [mismatch, IN_TEMPLATE]


def test_validatepodcreates_own_checks_come_in_its_order() -> None:
    """Ephemeral containers (of a pod not bound), nodeName beside scheduling gates (a bound
    one), seccomp, then AppArmor."""

    def doc(**spec: Any) -> dict[str, Any]:
        return pod_doc(
            {SECCOMP: "unconfined", APPARMOR_C: "unconfined"},
            {"seccompProfile": profile("RuntimeDefault")},
            {"appArmorProfile": profile("RuntimeDefault")},
            ephemeralContainers=[EPHEMERAL],
            schedulingGates=[{"name": "g"}],
            **spec,
        )

    gated = "spec.nodeName: Forbidden: cannot be set until all schedulingGates have been cleared"
    assert messages(doc()) == [ON_CREATE, SECCOMP_TYPE, APPARMOR_TYPE]
    assert messages(doc(nodeName="n1")) == [gated, SECCOMP_TYPE, APPARMOR_TYPE]


# ---------------------------------------------------------------------------------------------
# From the command line: a pod, and each workload kind's template.

MISMATCHED_SPEC: Final = {
    "securityContext": {"appArmorProfile": profile("Unconfined")},
    "containers": [{"name": "c", "image": "nginx"}],
}


def _template(restart: str | None = None) -> dict[str, Any]:
    spec = dict(MISMATCHED_SPEC)
    if restart:
        spec["restartPolicy"] = restart
    return {
        "metadata": {"labels": {"app": "web"}, "annotations": {APPARMOR_C: "runtime/default"}},
        "spec": spec,
    }


SELECTOR: Final = {"matchLabels": {"app": "web"}}
WORKLOADS: Final[dict[str, tuple[dict[str, Any], str]]] = {
    "Deployment": (
        {"apiVersion": "apps/v1", "spec": {"selector": SELECTOR, "template": _template()}},
        "spec.template",
    ),
    "ReplicaSet": (
        {"apiVersion": "apps/v1", "spec": {"selector": SELECTOR, "template": _template()}},
        "spec.template",
    ),
    "StatefulSet": (
        {
            "apiVersion": "apps/v1",
            "spec": {"serviceName": "web", "selector": SELECTOR, "template": _template()},
        },
        "spec.template",
    ),
    "DaemonSet": (
        {"apiVersion": "apps/v1", "spec": {"selector": SELECTOR, "template": _template()}},
        "spec.template",
    ),
    "ReplicationController": (
        {"apiVersion": "v1", "spec": {"selector": {"app": "web"}, "template": _template()}},
        "spec.template",
    ),
    "Job": (
        {"apiVersion": "batch/v1", "spec": {"template": _template("Never")}},
        "spec.template",
    ),
    "CronJob": (
        {
            "apiVersion": "batch/v1",
            "spec": {
                "schedule": "*/5 * * * *",
                "jobTemplate": {"spec": {"template": _template("Never")}},
            },
        },
        "spec.jobTemplate.spec.template",
    ),
}


@pytest.mark.parametrize(
    ("kind", "command"),
    [(kind, command) for kind in WORKLOADS for command in ("schedule", "check")
     if (kind, command) != ("DaemonSet", "schedule")],  # schedule leaves DaemonSets out
)  # fmt: skip
def test_a_templates_apparmor_annotation_against_its_pod_level_field_is_refused(
    kind: str, command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A template is validated as written (no copy into the container's field): every kind's
    names the field under its template's path."""
    doc, template = WORKLOADS[kind]
    text = json.dumps({**doc, "kind": kind, "metadata": {"name": "web"}})
    message = (
        f"({kind} default/web): {template}.spec.containers[0].securityContext.appArmorProfile."
        "type: Forbidden: apparmor type in annotation and field must match"
    )
    assert_manifest_refused(command, text, message, tmp_path, capsys)


@pytest.mark.parametrize("command", ["schedule", "check"])
@pytest.mark.parametrize(
    ("doc", "message"),
    [
        pytest.param(
            pod_doc({SECCOMP: "runtime/default"}, {"seccompProfile": profile("Unconfined")}),
            f"(Pod default/p): {SECCOMP_TYPE}",
            id="pod: seccomp",
        ),
        pytest.param(
            pod_doc(ephemeralContainers=[EPHEMERAL]),
            f"(Pod default/p): {ON_CREATE}",
            id="pod: ephemeral containers",
        ),
        pytest.param(
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": "web"},
                "spec": {
                    "selector": SELECTOR,
                    "template": {
                        "metadata": {"labels": {"app": "web"}},
                        "spec": {**MISMATCHED_SPEC, "ephemeralContainers": [EPHEMERAL]},
                    },
                },
            },
            f"(Deployment default/web): spec.template.{IN_TEMPLATE}",
            id="template: ephemeral containers",
        ),
    ],
)
def test_a_refused_pod_or_template_is_one_line_and_exit_2(
    command: str,
    doc: dict[str, Any],
    message: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    text = json.dumps({"apiVersion": "v1", "kind": "Pod", **doc})
    assert_manifest_refused(command, text, message, tmp_path, capsys)


def test_a_pod_whose_apparmor_annotation_only_the_copy_reconciles_is_scheduled(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The template's disagreement, in a bare pod, is reconciled by the copy: accepted."""
    from test_cli import run

    doc = pod_doc({APPARMOR_C: "runtime/default"}, {"appArmorProfile": profile("Unconfined")})
    pods = write_text(tmp_path, "pods.yaml", json.dumps({"apiVersion": "v1", "kind": "Pod", **doc}))
    nodes = write_text(tmp_path, "nodes.yaml", GOOD_NODE)
    code, out, err = run(["schedule", "--nodes", nodes, "--pods", pods, "-o", "jsonl"], capsys)
    assert code == 0, err
    assert '"n1"' in out


# ---------------------------------------------------------------------------------------------
# On the host's network (validatePodHostNetworkDeps, with SetDefaults_Pod's host ports).


def test_on_the_hosts_network_a_host_port_must_be_the_container_port() -> None:
    """A given host port other than the container port is refused, for a pod and a template,
    after the containers' own errors and before restartPolicy's; 0 passes (a pod's is
    defaulted, a template's stays 0); init containers are not checked."""
    ports = [{"containerPort": 80}, {"containerPort": 81, "hostPort": 82}]
    doc = pod_doc(hostNetwork=True, restartPolicy="Sometimes")
    doc["spec"]["containers"][0]["ports"] = ports
    doc["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "-1"}}
    doc["spec"]["initContainers"] = [
        {"name": "i", "image": "busybox", "ports": [{"containerPort": 1, "hostPort": 2}]}
    ]
    expected = [
        "spec.containers[0].resources.requests[cpu]",
        "spec.containers[0].ports[1].hostPort: Invalid value: 82: must match `containerPort` "
        "when `hostNetwork` is true",
        "spec.restartPolicy",
    ]
    for from_template in (False, True):
        found = messages(doc, from_template=from_template)
        assert [found[0].split(":")[0], found[1], found[2].split(":")[0]] == expected
        assert len(found) == 3
    doc["spec"]["hostNetwork"] = False
    assert "hostPort" not in " ".join(messages(doc))
    doc["spec"]["hostNetwork"] = True
    doc["spec"]["containers"][0]["ports"][1]["hostPort"] = 81
    assert "hostPort" not in " ".join(messages(doc))


def test_host_network_pods_ports_are_defaulted_and_then_conflict_on_a_node(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two pods on the host's network with the same container port and no host port: the API
    server gives each the host port, so NodePorts lets only one onto the one node."""
    from test_cli import run

    docs = []
    for name in ("a", "b"):
        doc = pod_doc(hostNetwork=True)
        doc["metadata"]["name"] = name
        doc["spec"]["containers"][0]["ports"] = [{"containerPort": 8080}]
        docs.append(json.dumps({"apiVersion": "v1", "kind": "Pod", **doc}))
    pods = write_text(tmp_path, "pods.yaml", "\n---\n".join(docs))
    nodes = write_text(tmp_path, "nodes.yaml", GOOD_NODE)
    code, out, err = run(["schedule", "--nodes", nodes, "--pods", pods], capsys)
    assert code == 0, err
    assert "1 of 2 queued pods bound" in out, out
    assert "didn't have free ports for the requested pod ports" in out, out


def test_a_duplicate_container_name_is_told_after_the_containers_other_errors() -> None:
    """validateContainers and validateInitContainers check a name's uniqueness after
    validateContainerCommon: the image, resources and profiles come first."""
    doc = pod_doc(None, None, {"seccompProfile": {}})
    doc["spec"]["containers"].append({"name": "c", "resources": {"requests": {"cpu": "-1"}}})
    doc["spec"]["initContainers"] = [{"name": "c"}, {"name": ""}, {"name": ""}]
    assert [m.split(": ")[0] + ": " + m.split(": ")[1] for m in messages(doc)] == [
        f"{C_SECCOMP}.type: Required value",
        "spec.containers[1].image: Required value",
        "spec.containers[1].resources.requests[cpu]: Invalid value",
        "spec.containers[1].name: Duplicate value",
        "spec.initContainers[0].image: Required value",
        "spec.initContainers[0].name: Duplicate value",
        "spec.initContainers[1].name: Required value",
        "spec.initContainers[1].image: Required value",
        "spec.initContainers[2].name: Required value",
        "spec.initContainers[2].image: Required value",
    ]


def test_an_empty_name_is_a_duplicate_among_regular_containers() -> None:
    doc = pod_doc()
    doc["spec"]["containers"] = [{"name": "", "image": "a"}, {"name": "", "image": "b"}]
    assert messages(doc) == [
        "spec.containers[0].name: Required value",
        "spec.containers[1].name: Required value",
        'spec.containers[1].name: Duplicate value: ""',
    ]


def test_pod_level_resources_are_told_after_the_containers_and_before_the_rest_of_the_spec() -> (
    None
):
    """PodLevelResources (on by default): ValidatePodSpec checks spec.resources right after the
    ephemeral containers, before the host network's ports and restartPolicy, long before the
    overhead."""
    doc = pod_doc(
        resources={"requests": {"cpu": "-1"}},
        restartPolicy="Sometimes",
        overhead={"cpu": "-1"},
    )
    paths = [m.split(":")[0].split("[")[0] for m in messages(doc)]
    assert paths == ["spec.resources.requests", "spec.restartPolicy", "spec.overhead"], paths
