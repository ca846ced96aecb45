"""InterPodAffinity: construction from its args.

Upstream: pkg/scheduler/framework/plugins/interpodaffinity/plugin.go (v1.35)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from topospread.framework.features import Features
from topospread.framework.interface import Handle
from topospread.plugins.interpodaffinity.args import (
    InterPodAffinityArgs,
    resolve_inter_pod_affinity_args,
)
from topospread.plugins.interpodaffinity.common import NAME
from topospread.plugins.interpodaffinity.filtering import Filtering
from topospread.plugins.interpodaffinity.scoring import Scoring
from topospread.plugins.interpodaffinity.terms import PodTermsCache


class InterPodAffinity(Filtering, Scoring):
    """Required pod (anti-)affinity filters nodes; preferred terms, both ways, score them.

    ``args`` is defaulted and validated here (see ``resolve_inter_pod_affinity_args``).
    Upstream: New (plugin.go, v1.35)
    """

    def __init__(
        self,
        args: InterPodAffinityArgs | Mapping[str, Any] | None,
        handle: Handle,
        features: Features,
    ) -> None:
        self.args = resolve_inter_pod_affinity_args(args)
        self.handle = handle
        self.features = features
        self.terms_cache = PodTermsCache()


def new(args: Mapping[str, Any] | None, handle: Handle, features: Features) -> InterPodAffinity:
    """The plugin from a profile's raw pluginConfig args. Upstream: New (plugin.go, v1.35)."""
    return InterPodAffinity(args, handle, features)


__all__ = ["NAME", "InterPodAffinity", "new"]
