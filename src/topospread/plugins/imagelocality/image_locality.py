"""ImageLocality: prefer nodes that already hold the pod's images, weighted by their spread.

Upstream: pkg/scheduler/framework/plugins/imagelocality/image_locality.go (v1.35), with the
image summaries the scheduler cache keeps per node (ImageStateSummary).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from topospread.api.types import Node, Pod
from topospread.framework.cycle_state import CycleState, StateKey, StateNotFoundError
from topospread.framework.features import Features
from topospread.framework.interface import Handle, ScoreExtensions
from topospread.framework.status import SUCCESS, Status
from topospread.framework.types import MAX_NODE_SCORE, NodeInfo

NAME: Final = "ImageLocality"

# Bounds of the summed image score; 90% of the images on Docker Hub fall in this range.
MB: Final = 1024 * 1024
MIN_THRESHOLD: Final = 23 * MB
MAX_CONTAINER_THRESHOLD: Final = 1000 * MB


def normalized_image_name(name: str) -> str:
    """Add the implied ``:latest`` tag when the name has none (a digest counts as a tag).

    Nothing else is normalized: ``nginx`` never matches ``docker.io/library/nginx:latest``.
    Upstream: normalizedImageName (image_locality.go, v1.35)
    """
    if name.rfind(":") <= name.rfind("/"):
        return name + ":latest"
    return name


def node_image_sizes(node: Node) -> dict[str, int]:
    """Each image name the node reports, with that image's size.

    A name listed under two images keeps the first image's size, as the cache does.
    Upstream: cacheImpl.addNodeImageStates (backend/cache/cache.go, v1.35)
    """
    sizes: dict[str, int] = {}
    for image in node.status.images:
        for name in image.names:
            sizes.setdefault(name, image.size_bytes)
    return sizes


def scaled_image_score(size: int, num_nodes: int, total_num_nodes: int) -> int:
    """The image size scaled by the fraction of nodes holding it (against node heating).

    Upstream: scaledImageScore (image_locality.go, v1.35)
    """
    spread = float(num_nodes) / float(total_num_nodes)
    return int(float(size) * spread)


def calculate_priority(sum_scores: int, num_containers: int) -> int:
    """Clamp the summed score to [23MB, 1000MB x containers] and scale it to 0..100.

    Upstream: calculatePriority (image_locality.go, v1.35)
    """
    max_threshold = MAX_CONTAINER_THRESHOLD * num_containers
    if sum_scores < MIN_THRESHOLD:
        sum_scores = MIN_THRESHOLD
    elif sum_scores > max_threshold:
        sum_scores = max_threshold
    numerator = MAX_NODE_SCORE * (sum_scores - MIN_THRESHOLD)
    denominator = max_threshold - MIN_THRESHOLD
    # Go's integer division truncates toward zero (the denominator is negative without any
    # container, and the numerator is then 0).
    q = abs(numerator) // abs(denominator)
    return q if (numerator >= 0) == (denominator >= 0) else -q


def _pod_images(pod: Pod) -> list[str]:
    """Normalized images of init containers then containers, duplicates kept (each counts)."""
    return [
        normalized_image_name(c.image) for c in (*pod.spec.init_containers, *pod.spec.containers)
    ]


@dataclass(frozen=True, slots=True)
class _ImageSpread:
    """How many nodes of the snapshot hold each of the pod's images, and how many nodes exist.

    NOTE: memoized in the cycle state on the first Score of a cycle; it relies on the snapshot
    not changing within a cycle, as the scheduler's snapshot does not.
    """

    images: frozenset[str]
    num_nodes: Mapping[str, int]
    total_num_nodes: int

    def clone(self) -> _ImageSpread:
        return self


_SPREAD_KEY: Final[StateKey[_ImageSpread]] = StateKey("ImageLocalitySpread")


def image_spread(images: frozenset[str], all_nodes: Iterable[NodeInfo]) -> _ImageSpread:
    """Count, over every node of the snapshot, the nodes reporting each wanted image name.

    Upstream: ImageStateSummary.NumNodes (the nodes in the cache holding the image, v1.35)
    """
    num_nodes = dict.fromkeys(images, 0)
    total = 0
    for info in all_nodes:
        total += 1
        seen = {
            name for image in info.node.status.images for name in image.names if name in num_nodes
        }
        for name in seen:
            num_nodes[name] += 1
    return _ImageSpread(images, num_nodes, total)


class ImageLocality:
    """Scores nodes by the total (spread-scaled) size of the pod's images they already hold."""

    def __init__(self, handle: Handle) -> None:
        self.handle = handle

    @property
    def name(self) -> str:
        return NAME

    def _spread(self, state: CycleState, images: frozenset[str]) -> _ImageSpread:
        try:
            cached = state.read(_SPREAD_KEY)
        except StateNotFoundError:
            cached = None
        if cached is not None and cached.images == images:
            return cached
        spread = image_spread(images, self.handle.snapshot_shared_lister().node_infos().list())
        state.write(_SPREAD_KEY, spread)
        return spread

    def sum_image_scores(self, node_info: NodeInfo, images: list[str], spread: _ImageSpread) -> int:
        """Upstream: sumImageScores (image_locality.go, v1.35)."""
        sizes = node_image_sizes(node_info.node)
        total = 0
        for image in images:
            size = sizes.get(image)
            if size is not None:
                total += scaled_image_score(size, spread.num_nodes[image], spread.total_num_nodes)
        return total

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status]:
        """Upstream: ImageLocality.Score (image_locality.go, v1.35)."""
        images = _pod_images(pod)
        spread = self._spread(state, frozenset(images))
        if spread.total_num_nodes == 0:
            # The node is not in the snapshot: no spread can be computed (upstream divides
            # by zero here, which never happens in the scheduler).
            return 0, SUCCESS
        sum_scores = self.sum_image_scores(node_info, images, spread)
        return calculate_priority(sum_scores, len(images)), SUCCESS

    def score_extensions(self) -> ScoreExtensions | None:
        return None


def new(args: Any | None, handle: Handle, features: Features) -> ImageLocality:
    """ImageLocality takes no args. Upstream: New (image_locality.go, v1.35)."""
    return ImageLocality(handle)
