"""The selector kube-scheduler derives for a pod from the objects that own or expose it.

Used by PodTopologySpread's default constraints (and SelectorSpread before it).
"""

from __future__ import annotations

from collections.abc import Mapping

from topospread.api.types import OwnerReference, Pod, Service
from topospread.framework.interface import ObjectLister
from topospread.labels.selector import (
    Selector,
    SelectorError,
    label_selector_as_selector,
    selector_from_set,
)


def get_pod_services(lister: ObjectLister, pod: Pod) -> list[Service]:
    """Services in the pod's namespace whose selector matches the pod's labels.

    A Service with a nil selector selects nothing (not everything).
    Upstream: GetPodServices (pkg/scheduler/framework/plugins/helper/spread.go, v1.35)
    """
    matched: list[Service] = []
    for service in lister.services(pod.metadata.namespace):
        selector = service.spec.selector
        if selector is None:
            continue
        if selector_from_set(selector).matches(pod.metadata.labels):
            matched.append(service)
    return matched


def get_controller_of(pod: Pod) -> OwnerReference | None:
    """The owner reference with ``controller: true`` (Upstream: metav1.GetControllerOfNoCopy)."""
    for ref in pod.metadata.owner_references:
        if ref.controller:
            return ref
    return None


def _group_version_kind(ref: OwnerReference) -> tuple[str, str, str] | None:
    """(group, version, kind) of an owner, or None when apiVersion does not parse."""
    api_version = ref.api_version
    if api_version.count("/") > 1:
        return None
    if "/" in api_version:
        group, version = api_version.split("/")
        if not group or not version:
            return None
    else:
        group, version = "", api_version
    return group, version, ref.kind


def default_selector(pod: Pod, lister: ObjectLister) -> Selector:
    """AND of the selectors of the pod's Services and of its controlling RC, RS or StatefulSet.

    Services and ReplicationControllers contribute label sets (merged, later keys winning);
    ReplicaSets and StatefulSets contribute their selector's requirements. An owner that cannot
    be found, or whose selector does not parse, contributes nothing.
    Upstream: DefaultSelector (pkg/scheduler/framework/plugins/helper/spread.go, v1.35)
    """
    label_set: dict[str, str] = {}
    for service in get_pod_services(lister, pod):
        label_set.update(service.spec.selector or {})
    selector = selector_from_set(label_set)

    owner = get_controller_of(pod)
    if owner is None:
        return selector
    gvk = _group_version_kind(owner)
    if gvk is None:
        return selector
    namespace = pod.metadata.namespace
    if gvk == ("", "v1", "ReplicationController"):
        rc = lister.replication_controller(namespace, owner.name)
        if rc is not None:
            rc_selector: Mapping[str, str] = rc.spec.selector or {}
            selector = selector_from_set({**label_set, **rc_selector})
    elif gvk in (("apps", "v1", "ReplicaSet"), ("apps", "v1", "StatefulSet")):
        obj = (
            lister.replica_set(namespace, owner.name)
            if gvk[2] == "ReplicaSet"
            else lister.stateful_set(namespace, owner.name)
        )
        if obj is not None:
            try:
                other = label_selector_as_selector(obj.spec.selector)
            except SelectorError:
                return selector
            requirements = other.requirements
            if requirements is not None:
                selector = selector.add(*requirements)
    return selector
