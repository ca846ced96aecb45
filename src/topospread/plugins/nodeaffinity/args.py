"""NodeAffinityArgs: the scheduler-enforced node affinity of a profile, and its validation.

Upstream: NodeAffinityArgs (pkg/scheduler/apis/config/types_pluginargs.go) and
ValidateNodeAffinityArgs (pkg/scheduler/apis/config/validation/validation_pluginargs.go), v1.35.
The v1 config API defines no defaults for these args.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from topospread.api.field import Path
from topospread.api.types import NodeAffinity
from topospread.errors import ConfigError
from topospread.plugins.nodeaffinity.selectors import (
    node_selector_errors,
    preferred_terms_errors,
    to_path,
)


class NodeAffinityArgs(
    msgspec.Struct, frozen=True, kw_only=True, rename="camel", omit_defaults=True
):
    """``addedAffinity`` is ANDed with every pod's required affinity and adds to its score.

    Only requiredDuringSchedulingIgnoredDuringExecution and
    preferredDuringSchedulingIgnoredDuringExecution are read, as upstream reads them.
    """

    added_affinity: NodeAffinity | None = None


def decode_node_affinity_args(raw: Mapping[str, Any] | NodeAffinityArgs | None) -> NodeAffinityArgs:
    """The args of a profile's pluginConfig entry (apiVersion and kind are ignored)."""
    if raw is None:
        return NodeAffinityArgs()
    if isinstance(raw, NodeAffinityArgs):
        return raw
    try:
        return msgspec.convert(raw, NodeAffinityArgs)
    except msgspec.ValidationError as err:
        raise ConfigError(f"decoding NodeAffinityArgs: {err}") from err


def set_defaults_node_affinity_args(args: NodeAffinityArgs) -> NodeAffinityArgs:
    """The v1 defaulting of NodeAffinityArgs: there is nothing to default."""
    return args


def validate_node_affinity_args(args: NodeAffinityArgs, path: Path | str = "") -> list[str]:
    """Field errors of the added affinity's required selector, then of its preferred terms.

    ``path`` is where the args sit (``profiles[0].pluginConfig[1].args`` when a whole
    configuration is validated; empty, the nil path, when the plugin validates its own args).
    Upstream: ValidateNodeAffinityArgs (validation_pluginargs.go, v1.35)
    """
    affinity = args.added_affinity
    if affinity is None:
        return []
    added = to_path(path).child("addedAffinity")
    errors: list[str] = []
    required = affinity.required_during_scheduling_ignored_during_execution
    if required is not None:
        errors.extend(
            node_selector_errors(
                required,
                added.child("requiredDuringSchedulingIgnoredDuringExecution"),
            )
        )
    preferred = affinity.preferred_during_scheduling_ignored_during_execution
    if preferred:
        errors.extend(
            preferred_terms_errors(
                preferred,
                added.child("preferredDuringSchedulingIgnoredDuringExecution"),
            )
        )
    return errors
