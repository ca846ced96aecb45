"""CSI migration in the volume binder: a bound PV of an in-tree plugin is checked against a
node as the CSI driver that replaced the plugin sees it, when the node's CSINode says the
plugin migrated there (its ``storage.alpha.kubernetes.io/migrated-plugins`` annotation).

Translation rewrites the PV's node affinity to the driver's topology key: the zone expressions
(``topology.kubernetes.io/zone``, or the legacy ``failure-domain.beta.kubernetes.io/zone``
when the PV uses that) become the driver's zone key (GCE PD ``topology.gke.io/zone``, AWS EBS
``topology.ebs.csi.aws.com/zone``, Cinder ``topology.cinder.csi.openstack.org/zone``); a PV
with no zone affinity gets one from its zone label; a legacy region expression becomes
``topology.kubernetes.io/region``. A node without the driver's key then fails the PV's
affinity. Azure Disk and Portworx keep their affinity (the driver's translation leaves it),
but an Azure Disk that is not a managed disk cannot be translated: an error. vSphere and Azure
File PVs are migratable but isCSIMigrationOnForPlugin does not list them: never translated.

Upstream: tryTranslatePVToCSI, isCSIMigrationOnForPlugin, isPluginMigratedToCSIOnNode
(binder.go, v1.35), and k8s.io/csi-translation-lib v0.35 (TranslateInTreePVToCSI of
plugins/gce_pd.go, aws_ebs.go, azure_disk.go, openstack_cinder.go, portworx.go, and
translateTopologyFromInTreeToCSI of plugins/in_tree_volume.go). The translated PV carries the
driver and volume handle; volume attributes, secrets and access modes are not modelled, nor
url.Parse's errors for an ``aws://`` volume ID (percent-escapes are taken as written).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

import msgspec

from topospread.api.storage import (
    ANN_MIGRATED_PLUGINS,
    CSINode,
    PersistentVolume,
    VolumeNodeAffinity,
)
from topospread.api.types import (
    LABEL_FAILURE_DOMAIN_BETA_REGION,
    LABEL_FAILURE_DOMAIN_BETA_ZONE,
    LABEL_TOPOLOGY_REGION,
    LABEL_TOPOLOGY_ZONE,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
)
from topospread.api.volumes import CSIPersistentVolumeSource
from topospread.plugins.nodevolumelimits.translation import (
    AWS_EBS_IN_TREE,
    AZURE_DISK_IN_TREE,
    CINDER_IN_TREE,
    CSI_DRIVER_OF,
    GCE_PD_IN_TREE,
    LABEL_MULTI_ZONE_DELIMITER,
    PORTWORX_IN_TREE,
    TranslationError,
    azure_disk_volume_handle,
    ebs_volume_id,
    gce_pv_volume_handle,
    is_csi_migration_on_for_plugin,
)
from topospread.plugins.volumebinding.pod_volumes import BinderError

GCE_PD_TOPOLOGY_KEY: Final = "topology.gke.io/zone"
AWS_EBS_TOPOLOGY_KEY: Final = "topology.ebs.csi.aws.com/zone"
CINDER_TOPOLOGY_KEY: Final = "topology.cinder.csi.openstack.org/zone"

# The PV sources the binder can translate, by field, with their plugin.
_PV_SOURCES: Final = (
    ("gce_persistent_disk", GCE_PD_IN_TREE),
    ("aws_elastic_block_store", AWS_EBS_IN_TREE),
    ("cinder", CINDER_IN_TREE),
    ("azure_disk", AZURE_DISK_IN_TREE),
    ("portworx_volume", PORTWORX_IN_TREE),
)


def migrated_plugin_of(pv: PersistentVolume) -> str | None:
    """The in-tree plugin of a PV the binder would translate on a node that migrated it (None:
    not migratable, or migration is off for its plugin).

    Upstream: IsPVMigratable / GetInTreePluginNameFromSpec (csi-translation-lib) and
    isCSIMigrationOnForPlugin (binder.go)
    """
    spec = pv.spec
    plugin = next((p for f, p in _PV_SOURCES if getattr(spec, f) is not None), None)
    return plugin if plugin is not None and is_csi_migration_on_for_plugin(plugin) else None


def migrated_plugins(csi_node: CSINode | None) -> frozenset[str]:
    """The plugins a CSINode's migrated-plugins annotation lists (split on commas as written)."""
    if csi_node is None:
        return frozenset()
    value = csi_node.metadata.annotations.get(ANN_MIGRATED_PLUGINS, "")
    return frozenset(value.split(",")) if value else frozenset()


def is_plugin_migrated_to_csi_on_node(plugin: str, csi_node: CSINode | None) -> bool:
    """Upstream: isPluginMigratedToCSIOnNode (binder.go, v1.35)."""
    return plugin in migrated_plugins(csi_node)


def try_translate_pv_to_csi(pv: PersistentVolume, csi_node: CSINode | None) -> PersistentVolume:
    """The PV as the CSI driver sees it when its plugin migrated on the node, else the PV.

    Upstream: tryTranslatePVToCSI (binder.go, v1.35)
    """
    plugin = migrated_plugin_of(pv)
    if plugin is None or not is_plugin_migrated_to_csi_on_node(plugin, csi_node):
        return pv
    try:
        return translate_in_tree_pv_to_csi(pv)
    except TranslationError as err:
        raise BinderError(f"could not translate pv: {err}") from err


def translate_in_tree_pv_to_csi(pv: PersistentVolume) -> PersistentVolume:
    """Upstream: TranslateInTreePVToCSI (csi-translation-lib translate.go and plugins/*.go)."""
    spec = pv.spec
    handle: str
    topology_key: str | None = None
    if spec.gce_persistent_disk is not None:
        plugin, handle = GCE_PD_IN_TREE, gce_pv_volume_handle(pv, spec.gce_persistent_disk.pd_name)
        topology_key = GCE_PD_TOPOLOGY_KEY
    elif spec.aws_elastic_block_store is not None:
        plugin, handle = AWS_EBS_IN_TREE, ebs_volume_id(spec.aws_elastic_block_store.volume_id)
        topology_key = AWS_EBS_TOPOLOGY_KEY
    elif spec.cinder is not None:
        plugin, handle = CINDER_IN_TREE, spec.cinder.volume_id
        topology_key = CINDER_TOPOLOGY_KEY
    elif spec.azure_disk is not None:
        plugin, handle = AZURE_DISK_IN_TREE, azure_disk_volume_handle(spec.azure_disk)
    elif spec.portworx_volume is not None:
        plugin, handle = PORTWORX_IN_TREE, spec.portworx_volume.volume_id
    else:
        raise TranslationError(
            f'could not find in-tree plugin translation logic for "{pv.metadata.name}"'
        )
    if topology_key is not None:
        pv = translate_topology_from_in_tree_to_csi(pv, topology_key)
    csi = CSIPersistentVolumeSource(driver=CSI_DRIVER_OF[plugin], volume_handle=handle)
    cleared = {field: None for field, _ in _PV_SOURCES}
    return msgspec.structs.replace(pv, spec=msgspec.structs.replace(pv.spec, csi=csi, **cleared))


# -- topology (plugins/in_tree_volume.go) --------------------------------------------------


def translate_topology_from_in_tree_to_csi(pv: PersistentVolume, csi_key: str) -> PersistentVolume:
    """The zone expressions of the PV's affinity under ``csi_key`` (or, without any, one made
    from its zone label, added to every term); a legacy region expression under the GA key.

    Upstream: translateTopologyFromInTreeToCSI (plugins/in_tree_volume.go)
    """
    zone_label, region_label = topology_label(pv)
    affinity = pv.spec.node_affinity
    if topology_values(affinity, zone_label):
        affinity = replace_topology(affinity, zone_label, csi_key)
    elif zone_label in pv.metadata.labels:
        zones = pv.metadata.labels[zone_label].split(LABEL_MULTI_ZONE_DELIMITER)
        affinity = add_topology(affinity, csi_key, zones)
    if region_label == LABEL_FAILURE_DOMAIN_BETA_REGION and topology_values(affinity, region_label):
        affinity = replace_topology(affinity, region_label, LABEL_TOPOLOGY_REGION)
    if affinity is pv.spec.node_affinity:
        return pv
    return msgspec.structs.replace(
        pv, spec=msgspec.structs.replace(pv.spec, node_affinity=affinity)
    )


def topology_label(pv: PersistentVolume) -> tuple[str, str]:
    """The zone and region labels the PV uses: GA or legacy, by its affinity first, then by its
    labels; GA when neither says. Upstream: getTopologyLabel (plugins/in_tree_volume.go)."""
    affinity = pv.spec.node_affinity
    labels = pv.metadata.labels
    if topology_key_exist(LABEL_TOPOLOGY_ZONE, affinity):
        return LABEL_TOPOLOGY_ZONE, LABEL_TOPOLOGY_REGION
    if topology_key_exist(LABEL_FAILURE_DOMAIN_BETA_ZONE, affinity):
        return LABEL_FAILURE_DOMAIN_BETA_ZONE, LABEL_FAILURE_DOMAIN_BETA_REGION
    if LABEL_TOPOLOGY_ZONE in labels:
        return LABEL_TOPOLOGY_ZONE, LABEL_TOPOLOGY_REGION
    if LABEL_FAILURE_DOMAIN_BETA_ZONE in labels:
        return LABEL_FAILURE_DOMAIN_BETA_ZONE, LABEL_FAILURE_DOMAIN_BETA_REGION
    return LABEL_TOPOLOGY_ZONE, LABEL_TOPOLOGY_REGION


def _terms(affinity: VolumeNodeAffinity | None) -> list[NodeSelectorTerm]:
    if affinity is None or affinity.required is None:
        return []
    return affinity.required.node_selector_terms


def topology_key_exist(key: str, affinity: VolumeNodeAffinity | None) -> bool:
    """Upstream: TopologyKeyExist (plugins/in_tree_volume.go)."""
    return any(e.key == key for t in _terms(affinity) for e in t.match_expressions)


def topology_values(affinity: VolumeNodeAffinity | None, key: str) -> list[str]:
    """The distinct values of ``key``'s expressions over all terms, sorted.

    Upstream: getTopologyValues (plugins/in_tree_volume.go)
    """
    return sorted(
        {v for t in _terms(affinity) for e in t.match_expressions if e.key == key for v in e.values}
    )


def replace_topology(
    affinity: VolumeNodeAffinity | None, old_key: str, new_key: str
) -> VolumeNodeAffinity | None:
    """Every expression of ``old_key`` renamed ``new_key``, values kept.

    Upstream: replaceTopology (plugins/in_tree_volume.go)
    """
    terms = _terms(affinity)
    if affinity is None or not terms:
        return affinity
    renamed = [
        msgspec.structs.replace(
            t,
            match_expressions=[
                msgspec.structs.replace(e, key=new_key) if e.key == old_key else e
                for e in t.match_expressions
            ],
        )
        for t in terms
    ]
    return VolumeNodeAffinity(required=NodeSelector(node_selector_terms=renamed))


def add_topology(
    affinity: VolumeNodeAffinity | None, key: str, zones: Iterable[str]
) -> VolumeNodeAffinity | None:
    """``key In zones`` (trimmed, distinct, sorted, empty ones dropped) appended to every term,
    one empty term made first when there is none; unchanged without a valid zone (upstream's
    error, which its caller ignores). Upstream: addTopology (plugins/in_tree_volume.go)."""
    values = sorted({z.strip() for z in zones if z.strip()})
    if not values:
        return affinity
    terms = _terms(affinity) or [NodeSelectorTerm()]
    topology = NodeSelectorRequirement(key=key, operator="In", values=values)
    added = [
        msgspec.structs.replace(t, match_expressions=[*t.match_expressions, topology])
        for t in terms
    ]
    return VolumeNodeAffinity(required=NodeSelector(node_selector_terms=added))
