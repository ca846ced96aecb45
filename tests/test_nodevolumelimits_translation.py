"""NodeVolumeLimits' view of CSI migration: which plugins it counts as their CSI drivers on a
node (isCSIMigrationOn, nodevolumelimits/utils.go, v1.35) and the volume handles translated
volumes get (csi-translation-lib v0.35's TranslateInTreePVToCSI /
TranslateInTreeInlineVolumeToCSI), shared with the volume binder's CSI migration."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from builders import api, make_pod, storage_handle
from topospread.api.storage import CSINode, PersistentVolume, PersistentVolumeClaim
from topospread.api.types import Node, Volume
from topospread.framework.cycle_state import CycleState
from topospread.framework.features import DEFAULT_FEATURES
from topospread.framework.status import SUCCESS, Code, new_status
from topospread.framework.types import NodeInfo
from topospread.plugins.nodevolumelimits import (
    ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED,
    new,
    translation,
)
from topospread.plugins.nodevolumelimits.translation import (
    inline_volume_handle,
    is_csi_migration_on,
    is_csi_migration_on_for_plugin,
    pv_volume_handle,
)
from topospread.plugins.volumebinding import csi_migration

MIGRATED = "storage.alpha.kubernetes.io/migrated-plugins"
BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
ZONE = "topology.kubernetes.io/zone"
GA = ["kubernetes.io/aws-ebs", "kubernetes.io/gce-pd", "kubernetes.io/azure-disk",
      "kubernetes.io/cinder"]  # fmt: skip
PORTWORX = "kubernetes.io/portworx-volume"
NOT_ON = ["kubernetes.io/azure-file", "kubernetes.io/vsphere-volume", "kubernetes.io/rbd", ""]
EXCEEDED = new_status(Code.Unschedulable, ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED)


def csi_node(annotation: str | None, drivers: dict[str, int] | None = None) -> CSINode:
    meta: dict[str, Any] = {"name": "n1"}
    if annotation is not None:
        meta["annotations"] = {MIGRATED: annotation}
    entries = [
        {"name": d, "nodeID": "n1", "allocatable": {"count": c}} for d, c in (drivers or {}).items()
    ]
    return api(CSINode, {"metadata": meta, "spec": {"drivers": entries}})


@pytest.mark.parametrize("annotation", [None, "", "kubernetes.io/cinder", ",".join(GA)])
def test_ga_plugins_are_migrated_on_every_node_with_a_csinode(annotation: str | None) -> None:
    """isCSIMigrationOn returns true for the GA plugins before it reads the annotation."""
    node = csi_node(annotation)
    for plugin in GA:
        assert is_csi_migration_on(node, plugin), plugin
        assert not is_csi_migration_on(None, plugin), plugin
    for plugin in NOT_ON:
        assert not is_csi_migration_on(csi_node(plugin), plugin), plugin


def test_portworx_is_migrated_where_its_csinode_lists_it() -> None:
    """Portworx's gate is GA (v1.33) but isCSIMigrationOn still asks the annotation."""
    assert is_csi_migration_on(csi_node(PORTWORX), PORTWORX)
    assert is_csi_migration_on(csi_node(f"kubernetes.io/aws-ebs,{PORTWORX}"), PORTWORX)
    assert not is_csi_migration_on(csi_node(None), PORTWORX)
    assert not is_csi_migration_on(csi_node("kubernetes.io/aws-ebs"), PORTWORX)
    assert not is_csi_migration_on(None, PORTWORX)


def test_the_binder_and_the_limits_share_one_list_of_plugins_migration_is_on_for() -> None:
    assert csi_migration.is_csi_migration_on_for_plugin is is_csi_migration_on_for_plugin
    assert [p for p in [*GA, PORTWORX, *NOT_ON] if is_csi_migration_on_for_plugin(p)] == [
        *GA,
        PORTWORX,
    ]


def pv(spec: dict[str, Any], labels: dict[str, str] | None = None) -> PersistentVolume:
    return api(PersistentVolume, {"metadata": {"name": "pv", "labels": labels or {}}, "spec": spec})


GCE = {"gcePersistentDisk": {"pdName": "disk-1"}}


@pytest.mark.parametrize(
    ("labels", "want"),
    [
        ({BETA_ZONE: "us-east1-b", ZONE: "us-east1-c"}, "zones/us-east1-b"),  # legacy first
        ({ZONE: "us-east1-c"}, "zones/us-east1-c"),
        ({BETA_ZONE: "", ZONE: "us-east1-c"}, "zones/us-east1-c"),  # an empty legacy label
        ({ZONE: "us-east1-b__us-east1-c"}, "regions/us-east1"),
        ({}, "zones/UNSPECIFIED"),
        ({ZONE: "zone1__zone2"}, None),  # no region: the translation fails, not counted
    ],
)
def test_gce_pd_handles_as_csi_translation_lib(labels: dict[str, str], want: str | None) -> None:
    got = pv_volume_handle(pv(GCE, labels))
    assert got == (None if want is None else f"projects/UNSPECIFIED/{want}/disks/disk-1")
    if want is not None:  # the binder's translation gives the same handle
        translated = csi_migration.translate_in_tree_pv_to_csi(pv(GCE, labels))
        assert translated.spec.csi is not None
        assert translated.spec.csi.volume_handle == got


@pytest.mark.parametrize(
    ("spec", "want"),
    [
        ({"awsElasticBlockStore": {"volumeID": "aws://us-east-1a/vol-1"}}, "vol-1"),
        # Not vol-*: the translation fails, the volume is not counted (logged upstream).
        ({"awsElasticBlockStore": {"volumeID": "aws://us-east-1a/disk-1"}}, None),
        ({"azureDisk": {"diskName": "d", "diskURI": "uri", "kind": "Managed"}}, "uri"),
        ({"azureDisk": {"diskName": "d", "diskURI": "uri"}}, None),  # kind defaults to Shared
        ({"portworxVolume": {"volumeID": "px-1"}}, "px-1"),
        ({"cinder": {"volumeID": "c-1"}}, "c-1"),
    ],
)
def test_pv_and_inline_handles_as_csi_translation_lib(
    spec: dict[str, Any], want: str | None
) -> None:
    assert pv_volume_handle(pv(spec)) == want
    volume = api(Volume, {"name": "v", **spec})
    assert inline_volume_handle(volume) == want


def limits_filter(
    annotation: str | None,
    driver: str,
    source: dict[str, Any],
    volume_ids: tuple[str, str] = ("vol-0", "vol-1"),
) -> Any:
    """NodeVolumeLimits on a node whose CSINode gives ``driver`` room for one volume, with a
    pod holding one in-tree PV of ``source`` bound there and a new pod with another (their
    volume IDs ``volume_ids``)."""
    node = api(Node, {"metadata": {"name": "n1"}})
    objects: list[Any] = [csi_node(annotation, {driver: 1})]
    for i in range(2):
        key = next(iter(source))
        spec = {key: {**source[key], "volumeID": volume_ids[i]}}
        objects.append(api(PersistentVolume, {"metadata": {"name": f"pv{i}"}, "spec": spec}))
        objects.append(
            api(
                PersistentVolumeClaim,
                {
                    "metadata": {"name": f"c{i}", "namespace": "default"},
                    "spec": {"volumeName": f"pv{i}"},
                },
            )
        )
    existing = make_pod("old").pvc("c0").obj()
    pod = make_pod("new").pvc("c1").obj()
    plugin = new(None, storage_handle([node], [], objects), DEFAULT_FEATURES)
    state = CycleState()
    plugin.pre_filter(state, pod, [])
    return plugin.filter(state, pod, NodeInfo(node, [existing]))


@pytest.mark.parametrize("annotation", [None, "kubernetes.io/aws-ebs"])
def test_in_tree_ebs_volumes_count_against_the_driver_with_or_without_the_annotation(
    annotation: str | None,
) -> None:
    got = limits_filter(annotation, "ebs.csi.aws.com", {"awsElasticBlockStore": {}})
    assert got == EXCEEDED


@pytest.mark.parametrize(
    "volume_ids",
    [
        ("aws://us-east-1a/disk-0", "vol-1"),  # the attached one
        ("vol-0", "aws://us-east-1a/disk-1"),  # the new pod's
    ],
)
def test_an_ebs_volume_whose_id_does_not_translate_is_not_counted(
    volume_ids: tuple[str, str],
) -> None:
    """Upstream's getCSIDriverInfo logs the translation error and returns no driver: the
    volume is skipped, so the other one alone fits the limit of one."""
    source = {"awsElasticBlockStore": {}}
    got = limits_filter("kubernetes.io/aws-ebs", "ebs.csi.aws.com", source, volume_ids)
    assert got == SUCCESS


@pytest.mark.parametrize(("annotation", "want"), [(None, SUCCESS), (PORTWORX, EXCEEDED)])
def test_portworx_volumes_count_where_the_csinode_migrated_them(
    annotation: str | None, want: Any
) -> None:
    assert limits_filter(annotation, "pxd.portworx.com", {"portworxVolume": {}}) == want


def test_translation_keeps_its_shared_names() -> None:
    """csi_migration reads the one translation module, not a copy of its helpers."""
    for name in ("ebs_volume_id", "gce_pv_volume_handle", "azure_disk_volume_handle"):
        assert getattr(csi_migration, name) is getattr(translation, name)


# Each migratable inline source by its wire name, in csi-translation-lib's order.
_INLINE_SOURCES: list[tuple[str, dict[str, Any], str]] = [
    ("gcePersistentDisk", {"pdName": "d"}, "kubernetes.io/gce-pd"),
    ("awsElasticBlockStore", {"volumeID": "v"}, "kubernetes.io/aws-ebs"),
    ("cinder", {"volumeID": "v"}, "kubernetes.io/cinder"),
    ("azureDisk", {"diskName": "d", "diskURI": "u"}, "kubernetes.io/azure-disk"),
    ("azureFile", {"secretName": "s", "shareName": "s"}, "kubernetes.io/azure-file"),
    ("vsphereVolume", {"volumePath": "p"}, "kubernetes.io/vsphere-volume"),
    ("portworxVolume", {"volumeID": "v"}, "kubernetes.io/portworx-volume"),
]


@pytest.mark.parametrize("first", range(len(_INLINE_SOURCES)), ids=[s[0] for s in _INLINE_SOURCES])
def test_an_inline_volume_is_of_the_first_migratable_source_it_sets(first: int) -> None:
    alone = {"name": "v", _INLINE_SOURCES[first][0]: _INLINE_SOURCES[first][1]}
    with_later = {"name": "v", **{wire: body for wire, body, _ in _INLINE_SOURCES[first:]}}
    plugin = _INLINE_SOURCES[first][2]
    assert translation.inline_plugin_name(msgspec.convert(alone, Volume)) == plugin
    assert translation.inline_plugin_name(msgspec.convert(with_later, Volume)) == plugin
    assert [p for _, p in translation._IN_TREE_SOURCES][first] == plugin


def test_a_token_or_claim_volume_is_of_no_migratable_source() -> None:
    for raw in (
        {"name": "kube-api-access-x", "projected": {"sources": []}},
        {"name": "data", "persistentVolumeClaim": {"claimName": "c"}},
        {"name": "cache", "emptyDir": {}},
    ):
        assert translation.inline_plugin_name(msgspec.convert(raw, Volume)) is None
