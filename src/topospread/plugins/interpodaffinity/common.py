"""What the InterPodAffinity extension points share: the plugin's name, args and term cache."""

from __future__ import annotations

from typing import Final

from topospread.framework.features import Features
from topospread.framework.interface import Handle
from topospread.plugins.interpodaffinity.args import InterPodAffinityArgs
from topospread.plugins.interpodaffinity.terms import (
    NamespaceLabels,
    PodTermsCache,
    namespace_labels_getter,
)

NAME: Final = "InterPodAffinity"

TopologyPair = tuple[str, str]
"""A topology key and a node's value for it (Upstream: topologyPair, filtering.go)."""


class PluginBase:
    """State the InterPodAffinity extension points share.

    Upstream: the InterPodAffinity struct (plugin.go, v1.35)
    """

    handle: Handle
    features: Features
    args: InterPodAffinityArgs
    terms_cache: PodTermsCache

    @property
    def name(self) -> str:
        return NAME

    def namespace_labels(self) -> NamespaceLabels:
        """Namespace labels from the handle's object lister (unlisted: no labels)."""
        return namespace_labels_getter(self.handle.object_lister().namespace)
