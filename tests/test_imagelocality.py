"""ImageLocality, translated from image_locality_test.go (v1.35)."""

from __future__ import annotations

import hashlib

import pytest

from builders import NodeBuilder, PodBuilder, make_node, make_pod
from topospread.api.types import Node, Pod
from topospread.cluster.snapshot import Snapshot, SnapshotHandle
from topospread.framework.cycle_state import CycleState
from topospread.framework.features import DEFAULT_FEATURES
from topospread.framework.interface import ScorePlugin
from topospread.framework.status import SUCCESS
from topospread.plugins import imagelocality
from topospread.plugins.imagelocality import MB, normalized_image_name


def _pod(containers: list[str], init_containers: tuple[str, ...] = ()) -> Pod:
    builder: PodBuilder = make_pod("p")
    for image in init_containers:
        builder = builder.init_container(image)
    for image in containers:
        builder = builder.container(image)
    return builder.obj()


def _node(name: str, *images: tuple[int, tuple[str, ...]]) -> Node:
    builder: NodeBuilder = make_node(name)
    for size_mb, names in images:
        builder = builder.image(size_mb * MB, *names)
    return builder.obj()


TEST_40_250 = _pod(["gcr.io/40", "gcr.io/250"])
TEST_40_300 = _pod(["gcr.io/40", "gcr.io/300"])
TEST_MIN_MAX = _pod(["gcr.io/10", "gcr.io/4000"])
TEST_300_600_900 = _pod(["gcr.io/300", "gcr.io/600", "gcr.io/900"])
TEST_30_40 = _pod(["gcr.io/30", "gcr.io/40"])
TEST_30_INIT_300 = _pod(["gcr.io/30"], init_containers=("gcr.io/300",))

NODE_40_300_2000 = (
    (40, ("gcr.io/40:latest", "gcr.io/40:v1", "gcr.io/40:v1")),
    (300, ("gcr.io/300:latest", "gcr.io/300:v1")),
    (2000, ("gcr.io/2000:latest",)),
)
NODE_250_10 = ((250, ("gcr.io/250:latest",)), (10, ("gcr.io/10:latest", "gcr.io/10:v1")))
NODE_600_40_900 = (
    (600, ("gcr.io/600:latest",)),
    (40, ("gcr.io/40:latest",)),
    (900, ("gcr.io/900:latest",)),
)
NODE_300_600_900 = (
    (300, ("gcr.io/300:latest",)),
    (600, ("gcr.io/600:latest",)),
    (900, ("gcr.io/900:latest",)),
)
NODE_4000_30 = ((4000, ("gcr.io/4000:latest",)), (30, ("gcr.io/30:latest",)))
NODE_20_30_40 = (
    (20, ("gcr.io/20:latest",)),
    (30, ("gcr.io/30:latest",)),
    (40, ("gcr.io/40:latest",)),
)


def _scores(pod: Pod, nodes: list[Node]) -> list[int]:
    snapshot = Snapshot(nodes)
    plugin = imagelocality.new(None, SnapshotHandle(snapshot), DEFAULT_FEATURES)
    assert isinstance(plugin, ScorePlugin)
    assert plugin.score_extensions() is None
    state = CycleState()
    scores = []
    for info in snapshot.list():
        score, status = plugin.score(state, pod, info)
        assert status is SUCCESS
        scores.append(score)
    return scores


@pytest.mark.parametrize(
    ("pod", "nodes", "want"),
    [
        # node1: 40M/2 < 23M -> 0; node2: 100 * (250M/2 - 23M) / (1000M*2 - 23M) = 5
        pytest.param(
            TEST_40_250,
            [_node("node1", *NODE_40_300_2000), _node("node2", *NODE_250_10)],
            [0, 5],
            id="two images spread on two nodes, prefer the larger image one",
        ),
        # node1: 100 * ((40M + 300M)/2 - 23M) / (1000M*2 - 23M) = 7
        pytest.param(
            TEST_40_300,
            [_node("node1", *NODE_40_300_2000), _node("node2", *NODE_250_10)],
            [7, 0],
            id="two images on one node, prefer this node",
        ),
        # node1: 4000M/2 >= 1000M*2, max-threshold
        pytest.param(
            TEST_MIN_MAX,
            [_node("node1", *NODE_4000_30), _node("node2", *NODE_250_10)],
            [100, 0],
            id="if exceed limit, use limit",
        ),
        # node1: 100 * (4000M/3 - 23M) / (1000M*2 - 23M) = 66
        pytest.param(
            TEST_MIN_MAX,
            [_node("node1", *NODE_4000_30), _node("node2", *NODE_250_10), _node("node3")],
            [66, 0, 0],
            id="if exceed limit, use limit (with node which has no images present)",
        ),
        # node1: 100 * (600M*2/3 + 900M*2/3 - 23M) / (1000M*3 - 23M) = 32
        # node2: 100 * (300M/3 + 600M*2/3 + 900M*2/3 - 23M) / (1000M*3 - 23M) = 36
        pytest.param(
            TEST_300_600_900,
            [_node("node1", *NODE_600_40_900), _node("node2", *NODE_300_600_900), _node("node3")],
            [32, 36, 0],
            id="pod with multiple large images, node2 is preferred",
        ),
        # node1: 100 * (30M + 40M/2 - 23M) / (1000M*2 - 23M) = 1
        pytest.param(
            TEST_30_40,
            [_node("node1", *NODE_20_30_40), _node("node2", *NODE_4000_30)],
            [1, 0],
            id="pod with multiple small images",
        ),
        # node1: 100 * (300M/2 - 23M) / (1000M*2 - 23M) = 6
        pytest.param(
            TEST_30_INIT_300,
            [_node("node1", *NODE_40_300_2000), _node("node2", *NODE_20_30_40)],
            [6, 0],
            id="include InitContainers: two images spread on two nodes, prefer the larger one",
        ),
        pytest.param(
            _pod(["docker.io/library/nginx"]),
            [_node("node1", (500, ("nginx:latest",))), _node("node2")],
            [0, 0],
            id="no registry normalisation: nginx:latest is not docker.io/library/nginx:latest",
        ),
        pytest.param(
            _pod(["gcr.io/2000", "gcr.io/2000"]),
            [_node("node1", *NODE_40_300_2000)],
            [100],
            id="the same image in two containers counts twice",
        ),
        pytest.param(
            _pod([]),
            [_node("node1", *NODE_40_300_2000)],
            [0],
            id="a pod without containers scores 0",
        ),
    ],
)
def test_image_locality_score(pod: Pod, nodes: list[Node], want: list[int]) -> None:
    assert _scores(pod, nodes) == want


def _fake_digest(content: str) -> str:
    return "sha256:" + hashlib.sha256(content.encode()).hexdigest()


@pytest.mark.parametrize(
    ("name", "want"),
    [
        pytest.param("root", "root:latest", id="add :latest postfix 1"),
        pytest.param("gcr.io:5000/root", "gcr.io:5000/root:latest", id="add :latest postfix 2"),
        pytest.param("root:tag", "root:tag", id="keep it as is 1"),
        pytest.param(
            "root@" + _fake_digest("root"), "root@" + _fake_digest("root"), id="keep it as is 2"
        ),
    ],
)
def test_normalized_image_name(name: str, want: str) -> None:
    assert normalized_image_name(name) == want


def test_the_spread_is_counted_once_per_cycle() -> None:
    nodes = [_node("node1", *NODE_40_300_2000), _node("node2", *NODE_250_10)]
    snapshot = Snapshot(nodes)
    plugin = imagelocality.new(None, SnapshotHandle(snapshot), DEFAULT_FEATURES)
    state = CycleState()
    first = [plugin.score(state, TEST_40_300, info)[0] for info in snapshot.list()]
    # Another pod in the same state must not reuse the first pod's counts.
    other = [plugin.score(state, TEST_40_250, info)[0] for info in snapshot.list()]
    assert (first, other) == ([7, 0], [0, 5])
