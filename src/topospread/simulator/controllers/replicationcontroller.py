"""The ReplicationController controller: the ReplicaSet controller run on a ReplicationController
converted to a ReplicaSet, as upstream runs it.

Upstream's ReplicationManager is the ReplicaSet controller constructed with the v1
ReplicationController kind and adapters that convert each RC to a ReplicaSet and back: the
equality-based ``spec.selector`` map becomes ``matchLabels``, and everything else (claims,
generateName ``<rc>-xxxxx``, scale-down ranking, the burst limit) is the ReplicaSet
controller's. The converted object keeps the RC's apiVersion and kind, so the pods' controller
references name the ReplicationController.

Upstream: pkg/controller/replication/replication_controller.go and conversion.go (v1.35)
"""

from __future__ import annotations

import random
from collections.abc import Iterable

import msgspec

from topospread.api.types import (
    LabelSelector,
    Pod,
    PodTemplateSpec,
    ReplicaSet,
    ReplicaSetSpec,
    ReplicationController,
)
from topospread.errors import ValidationError
from topospread.simulator.controllers.common import PodActions, describe
from topospread.simulator.controllers.replicaset import sync_replica_set


def set_defaults_replication_controller(rc: ReplicationController) -> ReplicationController:
    """An empty selector and empty labels default to the template's labels; ``replicas`` to 1.

    Upstream: SetDefaults_ReplicationController (pkg/apis/core/v1/defaults.go, v1.35)
    """
    spec, meta = rc.spec, rc.metadata
    labels = spec.template.metadata.labels if spec.template is not None else {}
    if labels:
        if not spec.selector:
            spec = msgspec.structs.replace(spec, selector=dict(labels))
        if not meta.labels:
            meta = msgspec.structs.replace(meta, labels=dict(labels))
    if spec.replicas is None:
        spec = msgspec.structs.replace(spec, replicas=1)
    if spec is rc.spec and meta is rc.metadata:
        return rc
    return msgspec.structs.replace(rc, metadata=meta, spec=spec)


def validate_replication_controller_spec(rc: ReplicationController) -> None:
    """What the API server checks of a (defaulted) RC before the controller sees it: a
    non-empty selector and a template whose labels it selects; the rest of the template is
    checked as the pods are admitted.

    Upstream: ValidateReplicationControllerSpec (pkg/apis/core/validation/validation.go, v1.35)
    """
    spec = rc.spec
    if not spec.selector:
        raise ValidationError(f"{describe(rc)}: spec.selector: Required value")
    if spec.template is None:
        raise ValidationError(f"{describe(rc)}: spec.template: Required value")
    labels = spec.template.metadata.labels
    if any(labels.get(k) != v for k, v in spec.selector.items()):
        shown = ", ".join(f'"{k}":"{v}"' for k, v in sorted(labels.items()))
        raise ValidationError(
            f"{describe(rc)}: spec.template.metadata.labels: Invalid value: "
            f"map[string]string{{{shown}}}: selector does not match labels in spec.template"
        )


def as_replica_set(rc: ReplicationController) -> ReplicaSet:
    """The RC as the ReplicaSet controller reads it: ``matchLabels`` from the selector map,
    the RC's own apiVersion and kind (its pods' controller references name the RC).

    Upstream: convertRCtoRS / Convert_v1_ReplicationControllerSpec_To_apps_ReplicaSetSpec
    (pkg/controller/replication/conversion.go, v1.35)
    """
    spec = rc.spec
    selector = LabelSelector(match_labels=dict(spec.selector)) if spec.selector else None
    return ReplicaSet(
        api_version=rc.api_version,
        kind=rc.kind,
        metadata=rc.metadata,
        spec=ReplicaSetSpec(
            replicas=spec.replicas,
            selector=selector,
            template=spec.template if spec.template is not None else PodTemplateSpec(),
            min_ready_seconds=spec.min_ready_seconds,
        ),
    )


def sync_replication_controller(
    rc: ReplicationController,
    pods: Iterable[Pod],
    *,
    rng: random.Random,
    now: int | None = None,
) -> PodActions:
    """One sync of a ReplicationController: the ReplicaSet controller's sync of the converted
    RC. An RC has no controller, so, as upstream, no related pods rank its scale-down victims.

    Upstream: ReplicationManager (the ReplicaSet controller's syncReplicaSet), v1.35
    """
    rc = set_defaults_replication_controller(rc)
    validate_replication_controller_spec(rc)
    return sync_replica_set(as_replica_set(rc), pods, rng=rng, now=now)


__all__ = [
    "as_replica_set",
    "set_defaults_replication_controller",
    "sync_replication_controller",
    "validate_replication_controller_spec",
]
