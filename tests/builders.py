"""Fluent builders for test objects, in the spirit of upstream's st.MakePod() wrappers."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec

from topospread.api.types import Node, Pod


class PodBuilder:
    def __init__(self, name: str) -> None:
        self._meta: dict[str, Any] = {"name": name, "namespace": "default", "labels": {}}
        self._spec: dict[str, Any] = {}
        self._status: dict[str, Any] = {}

    def namespace(self, ns: str) -> PodBuilder:
        self._meta["namespace"] = ns
        return self

    def uid(self, uid: str) -> PodBuilder:
        self._meta["uid"] = uid
        return self

    def label(self, key: str, value: str = "") -> PodBuilder:
        self._meta["labels"][key] = value
        return self

    def node(self, name: str) -> PodBuilder:
        self._spec["nodeName"] = name
        return self

    def terminating(self) -> PodBuilder:
        self._meta["deletionTimestamp"] = "2024-01-01T00:00:00Z"
        return self

    def owner(self, kind: str, name: str, api_version: str = "apps/v1") -> PodBuilder:
        self._meta.setdefault("ownerReferences", []).append(
            {"apiVersion": api_version, "kind": kind, "name": name, "controller": True}
        )
        return self

    def node_selector(self, key: str, value: str) -> PodBuilder:
        self._spec.setdefault("nodeSelector", {})[key] = value
        return self

    def node_affinity(self, key: str, operator: str, values: list[str]) -> PodBuilder:
        terms = (
            self._spec.setdefault("affinity", {})
            .setdefault("nodeAffinity", {})
            .setdefault("requiredDuringSchedulingIgnoredDuringExecution", {"nodeSelectorTerms": []})
        )["nodeSelectorTerms"]
        terms.append({"matchExpressions": [{"key": key, "operator": operator, "values": values}]})
        return self

    def toleration(
        self, key: str = "", operator: str = "Exists", value: str = "", effect: str = ""
    ) -> PodBuilder:
        self._spec.setdefault("tolerations", []).append(
            {"key": key, "operator": operator, "value": value, "effect": effect}
        )
        return self

    def spread_constraint(
        self,
        max_skew: int,
        topology_key: str,
        when: str = "DoNotSchedule",
        selector: dict[str, Any] | None = None,
        *,
        min_domains: int | None = None,
        node_affinity_policy: str | None = None,
        node_taints_policy: str | None = None,
        match_label_keys: list[str] | None = None,
    ) -> PodBuilder:
        c: dict[str, Any] = {
            "maxSkew": max_skew,
            "topologyKey": topology_key,
            "whenUnsatisfiable": when,
        }
        if selector is not None:
            c["labelSelector"] = selector
        if min_domains is not None:
            c["minDomains"] = min_domains
        if node_affinity_policy is not None:
            c["nodeAffinityPolicy"] = node_affinity_policy
        if node_taints_policy is not None:
            c["nodeTaintsPolicy"] = node_taints_policy
        if match_label_keys is not None:
            c["matchLabelKeys"] = match_label_keys
        self._spec.setdefault("topologySpreadConstraints", []).append(c)
        return self

    def priority(self, value: int) -> PodBuilder:
        self._spec["priority"] = value
        return self

    def scheduling_gates(self, *names: str) -> PodBuilder:
        self._spec["schedulingGates"] = [{"name": n} for n in names]
        return self

    def container(
        self, image: str = "nginx", ports: list[dict[str, Any]] | None = None
    ) -> PodBuilder:
        """A container with an image and ``ports`` as written in a manifest."""
        c: dict[str, Any] = {"name": f"c{len(self._spec.get('containers', []))}", "image": image}
        if ports:
            c["ports"] = ports
        self._spec.setdefault("containers", []).append(c)
        return self

    def init_container(
        self,
        image: str = "busybox",
        ports: list[dict[str, Any]] | None = None,
        restart_policy: str | None = None,
    ) -> PodBuilder:
        """An init container; ``restart_policy="Always"`` makes it a sidecar."""
        c: dict[str, Any] = {
            "name": f"i{len(self._spec.get('initContainers', []))}",
            "image": image,
        }
        if ports:
            c["ports"] = ports
        if restart_policy is not None:
            c["restartPolicy"] = restart_policy
        self._spec.setdefault("initContainers", []).append(c)
        return self

    def req(self, **requests: str) -> PodBuilder:
        """A container requesting ``requests`` (``st.MakePod().Req``), e.g. ``cpu="100m"``."""
        c = {"name": f"c{len(self._spec.get('containers', []))}", "image": "nginx"}
        self._spec.setdefault("containers", []).append(
            {**c, "resources": {"requests": dict(requests)}}
        )
        return self

    def preemption_policy(self, policy: str) -> PodBuilder:
        self._spec["preemptionPolicy"] = policy
        return self

    def start_time(self, rfc3339: str) -> PodBuilder:
        self._status["startTime"] = rfc3339
        return self

    def nominated_node(self, name: str) -> PodBuilder:
        self._status["nominatedNodeName"] = name
        return self

    def condition(self, type_: str, status: str, reason: str = "") -> PodBuilder:
        self._status.setdefault("conditions", []).append(
            {"type": type_, "status": status, "reason": reason}
        )
        return self

    def volume(self, volume: dict[str, Any]) -> PodBuilder:
        """``st.MakePod().Volume(v)``: a volume as the API writes it (camelCase)."""
        self._spec.setdefault("volumes", []).append(volume)
        return self

    def pvc(self, claim: str) -> PodBuilder:
        """``st.MakePod().PVC(name)``: a volume named after the claim it uses."""
        return self.volume({"name": claim, "persistentVolumeClaim": {"claimName": claim}})

    def spec_field(self, name: str, value: Any) -> PodBuilder:
        """Set a spec field verbatim (camelCase name, manifest-shaped value)."""
        self._spec[name] = value
        return self

    def obj(self) -> Pod:
        return msgspec.convert(
            {"metadata": self._meta, "spec": self._spec, "status": self._status}, Pod
        )


class NodeBuilder:
    def __init__(self, name: str) -> None:
        self._meta: dict[str, Any] = {"name": name, "labels": {}}
        self._spec: dict[str, Any] = {}
        self._status: dict[str, Any] = {}

    def label(self, key: str, value: str = "") -> NodeBuilder:
        self._meta["labels"][key] = value
        return self

    def taint(self, key: str, value: str = "", effect: str = "NoSchedule") -> NodeBuilder:
        self._spec.setdefault("taints", []).append({"key": key, "value": value, "effect": effect})
        return self

    def unschedulable(self) -> NodeBuilder:
        self._spec["unschedulable"] = True
        return self

    def capacity(self, **resources: str) -> NodeBuilder:
        """status.capacity and status.allocatable (``st.MakeNode().Capacity``: 32 pods unless
        ``pods`` is given)."""
        res = {"pods": "32", **resources}
        self._status["capacity"] = dict(res)
        self._status["allocatable"] = dict(res)
        return self

    def image(self, size_bytes: int, *names: str) -> NodeBuilder:
        """An entry of status.images."""
        self._status.setdefault("images", []).append(
            {"names": list(names), "sizeBytes": size_bytes}
        )
        return self

    def obj(self) -> Node:
        return msgspec.convert(
            {"metadata": self._meta, "spec": self._spec, "status": self._status}, Node
        )


def make_pod(name: str) -> PodBuilder:
    return PodBuilder(name)


def make_node(name: str) -> NodeBuilder:
    return NodeBuilder(name)


def exists(key: str) -> dict[str, Any]:
    """``MakeLabelSelector().Exists(key)``."""
    return {"matchExpressions": [{"key": key, "operator": "Exists"}]}


def match_labels(**labels: str) -> dict[str, Any]:
    return {"matchLabels": labels}


def storage_handle(
    nodes: Sequence[Node], pods: Sequence[Pod] = (), objects: Sequence[Any] = ()
) -> Any:
    """A framework handle over a snapshot of ``nodes`` and bound ``pods`` whose storage lister
    holds ``objects`` (PVs, claims, StorageClasses, CSINodes, CSIDrivers, capacities)."""
    from topospread.cluster.snapshot import ObjectStore, Snapshot, SnapshotHandle
    from topospread.cluster.storage import StorageState

    return SnapshotHandle(Snapshot(nodes, pods), ObjectStore(storage=StorageState(objects)))


def api(cls: type[Any], data: dict[str, Any]) -> Any:
    """An API object of ``cls`` from its manifest dict (camelCase)."""
    return msgspec.convert(data, cls)
