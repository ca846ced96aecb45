"""The framework of one profile: its plugins per extension point, and how each point runs.

Upstream: pkg/scheduler/framework/runtime/framework.go (v1.35). The rules that decide outcomes:
- PreFilter: Skip drops the plugin's Filter for this cycle; UnschedulableAndUnresolvable stops at
  once; Unschedulable is remembered while the other PreFilters still run; PreFilterResults are
  intersected, and an empty intersection rejects every node.
- Filter: plugins run in order and the first non-success status is the node's status.
- Score: plugins whose PreScore returned Skip are not run; each plugin's scores are normalized,
  checked to lie in [0, 100] and multiplied by the plugin's weight.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from topospread.api.types import Pod
from topospread.errors import ConfigError
from topospread.framework.config import PluginRef, Profile
from topospread.framework.config_fields import EXTENSION_POINTS
from topospread.framework.cycle_state import CycleState
from topospread.framework.features import Features
from topospread.framework.handle import FrameworkHandle
from topospread.framework.interface import (
    BindPlugin,
    FilterPlugin,
    Handle,
    PermitPlugin,
    Plugin,
    PostFilterPlugin,
    PostFilterResult,
    PreBindPlugin,
    PreEnqueuePlugin,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    QueueSortPlugin,
    ReservePlugin,
    ScorePlugin,
)
from topospread.framework.nominator import ge_nominated_pods
from topospread.framework.status import SKIP, SUCCESS, Code, Status, as_status, new_status
from topospread.framework.types import MAX_NODE_SCORE, MIN_NODE_SCORE, NodeInfo, NodeScore

PluginFactory = Callable[[Mapping[str, Any] | None, Handle, Features], Plugin]
Registry = Mapping[str, PluginFactory]

P = TypeVar("P")

_POINT_TYPES: Mapping[str, type] = {
    "preEnqueue": PreEnqueuePlugin,
    "queueSort": QueueSortPlugin,
    "preFilter": PreFilterPlugin,
    "filter": FilterPlugin,
    "postFilter": PostFilterPlugin,
    "preScore": PreScorePlugin,
    "score": ScorePlugin,
    "reserve": ReservePlugin,
    "permit": PermitPlugin,
    "preBind": PreBindPlugin,
    "bind": BindPlugin,
    "postBind": type(None),  # no in-tree PostBind plugin in the default profile
}

_GO_TYPE_NAMES: Mapping[str, str] = {
    "preEnqueue": "PreEnqueuePlugin",
    "queueSort": "QueueSortPlugin",
    "preFilter": "PreFilterPlugin",
    "filter": "FilterPlugin",
    "postFilter": "PostFilterPlugin",
    "preScore": "PreScorePlugin",
    "score": "ScorePlugin",
    "reserve": "ReservePlugin",
    "permit": "PermitPlugin",
    "preBind": "PreBindPlugin",
    "bind": "BindPlugin",
    "postBind": "PostBindPlugin",
}


@dataclass(slots=True)
class PluginScore:
    name: str
    score: int


@dataclass(slots=True)
class NodePluginScores:
    """A node's weighted score from each plugin and their total (Upstream: NodePluginScores)."""

    name: str
    scores: list[PluginScore] = field(default_factory=list)
    total_score: int = 0


class Framework:
    """The plugins of one profile, instantiated once, and the runners of each extension point.

    Upstream: frameworkImpl / NewFramework (framework/runtime/framework.go, v1.35)
    """

    def __init__(
        self, profile: Profile, registry: Registry, handle: FrameworkHandle, features: Features
    ) -> None:
        self.profile = profile
        self.handle = handle
        handle.framework = self
        names: list[str] = []
        for plugin_set in profile.plugins.values():
            for ref in plugin_set.enabled:
                if ref.name not in names:
                    names.append(ref.name)
        self.plugins: dict[str, Plugin] = {}
        for name in names:
            factory = registry.get(name)
            if factory is None:
                continue  # reported below, with the extension point that names it
            try:
                self.plugins[name] = factory(profile.plugin_args.get(name), handle, features)
            except ConfigError as err:
                where = profile.args_where.get(name)
                said = f'plugin "{name}": {err}'
                raise ConfigError(f"{where}: {said}" if where else said) from err

        lists: dict[str, list[Plugin]] = {}
        for point in EXTENSION_POINTS:
            lists[point] = self._plugins_for(point)
        self.pre_enqueue_plugins: list[PreEnqueuePlugin] = lists["preEnqueue"]  # type: ignore[assignment]
        self.queue_sort_plugins: list[QueueSortPlugin] = lists["queueSort"]  # type: ignore[assignment]
        self.pre_filter_plugins: list[PreFilterPlugin] = lists["preFilter"]  # type: ignore[assignment]
        self.filter_plugins: list[FilterPlugin] = lists["filter"]  # type: ignore[assignment]
        self.post_filter_plugins: list[PostFilterPlugin] = lists["postFilter"]  # type: ignore[assignment]
        self.pre_score_plugins: list[PreScorePlugin] = lists["preScore"]  # type: ignore[assignment]
        self.score_plugins: list[ScorePlugin] = lists["score"]  # type: ignore[assignment]
        self.reserve_plugins: list[ReservePlugin] = lists["reserve"]  # type: ignore[assignment]
        self.permit_plugins: list[PermitPlugin] = lists["permit"]  # type: ignore[assignment]
        self.pre_bind_plugins: list[PreBindPlugin] = lists["preBind"]  # type: ignore[assignment]
        self.bind_plugins: list[BindPlugin] = lists["bind"]  # type: ignore[assignment]

        name = profile.scheduler_name
        if len(self.queue_sort_plugins) != 1:
            raise ConfigError(
                f'only one queue sort plugin required for profile with scheduler name "{name}", '
                f"but got {len(self.queue_sort_plugins)}"
            )
        if not self.bind_plugins:
            raise ConfigError(
                f'at least one bind plugin is needed for profile with scheduler name "{name}"'
            )
        self.score_plugin_weight: dict[str, int] = {}
        weighted = [*profile.plugins["score"].enabled, *profile.plugins["multiPoint"].enabled]
        for ref in weighted:
            plugin = self.plugins.get(ref.name)
            if not isinstance(plugin, ScorePlugin) or ref.name in self.score_plugin_weight:
                continue
            self.score_plugin_weight[ref.name] = ref.weight or 1

    @property
    def profile_name(self) -> str:
        return self.profile.scheduler_name

    def _plugins_for(self, point: str) -> list[Plugin]:
        """One extension point's plugins: explicit ones, then multiPoint expansion.

        Upstream: updatePluginList + expandMultiPointPlugins (framework/runtime/framework.go)
        """
        kind = _POINT_TYPES[point]
        explicit: list[str] = []
        for ref in self.profile.plugins[point].enabled:
            plugin = self.plugins.get(ref.name)
            if plugin is None:
                raise ConfigError(f'{_GO_TYPE_NAMES[point]} "{ref.name}" does not exist')
            if not isinstance(plugin, kind):
                raise ConfigError(
                    f'plugin "{ref.name}" does not extend {_GO_TYPE_NAMES[point]} plugin'
                )
            if ref.name in explicit:
                raise ConfigError(
                    f'plugin "{ref.name}" already registered as "{_GO_TYPE_NAMES[point]}"'
                )
            explicit.append(ref.name)
        disabled = {ref.name for ref in self.profile.plugins[point].disabled}
        if "*" in disabled:
            return [self.plugins[n] for n in explicit]
        multi: list[str] = []
        overrides: set[str] = set()
        for ref in self.profile.plugins["multiPoint"].enabled:
            plugin = self.plugins.get(ref.name)
            if plugin is None:
                raise ConfigError(f'{_GO_TYPE_NAMES[point]} "{ref.name}" does not exist')
            if not isinstance(plugin, kind) or ref.name in disabled:
                continue
            if ref.name in explicit:
                overrides.add(ref.name)
                continue
            if ref.name in multi:
                raise ConfigError(
                    f'plugin "{ref.name}" already registered as "{_GO_TYPE_NAMES[point]}"'
                )
            multi.append(ref.name)
        ordered = [n for n in explicit if n in overrides]
        ordered += multi
        ordered += [n for n in explicit if n not in overrides]
        return [self.plugins[n] for n in ordered]

    # ------------------------------------------------------------------ queueing

    def queue_sort_less(self) -> Callable[[Any, Any], bool]:
        return self.queue_sort_plugins[0].less

    def run_pre_enqueue_plugins(self, pod: Pod) -> Status:
        """Upstream: RunPreEnqueuePlugins (framework.go, v1.35)."""
        for pl in self.pre_enqueue_plugins:
            status = pl.pre_enqueue(pod)
            if not status.is_success:
                return status.with_plugin(pl.name)
        return SUCCESS

    # ------------------------------------------------------------------ filtering

    def run_pre_filter_plugins(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status, set[str]]:
        """Upstream: RunPreFilterPlugins (framework.go, v1.35)."""
        result: PreFilterResult | None = None
        plugins_with_nodes: set[str] = set()
        skip: set[str] = set()
        return_status = SUCCESS
        try:
            for pl in self.pre_filter_plugins:
                r, s = _guard(lambda pl=pl: pl.pre_filter(state, pod, nodes))  # type: ignore[misc]
                if s.is_skip:
                    skip.add(pl.name)
                    continue
                if not s.is_success:
                    s = s.with_plugin(pl.name)
                    if s.code is Code.UnschedulableAndUnresolvable:
                        return None, s, set()
                    if s.code is Code.Unschedulable:
                        return_status = s
                        continue
                    err = as_status(f'running PreFilter plugin "{pl.name}": {s.message}')
                    return None, err.with_plugin(pl.name), set()
                if r is not None and r.node_names is not None:
                    plugins_with_nodes.add(pl.name)
                result = _merge_pre_filter_results(result, r)
                if result is not None and result.node_names is not None and not result.node_names:
                    names = sorted(plugins_with_nodes)
                    if len(names) == 1:
                        msg = f"node(s) didn't satisfy plugin {names[0]}"
                    else:
                        msg = f"node(s) didn't satisfy plugin(s) [{' '.join(names)}] simultaneously"
                    status = new_status(Code.UnschedulableAndUnresolvable, msg)
                    return result, status, plugins_with_nodes
            return result, return_status, plugins_with_nodes
        finally:
            state.skip_filter_plugins = skip

    def run_filter_plugins(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        """The first failing filter's status, tagged with the plugin's name.

        Upstream: RunFilterPlugins (framework.go, v1.35)
        """
        skip = state.skip_filter_plugins
        for pl in self.filter_plugins:
            if pl.name in skip:
                continue
            status = self.run_filter_plugin(pl, state, pod, node_info)
            if not status.is_success:
                return status
        return SUCCESS

    def run_filter_plugin(
        self, pl: FilterPlugin, state: CycleState, pod: Pod, node_info: NodeInfo
    ) -> Status:
        """One filter's status as RunFilterPlugins reports it: tagged with the plugin's name,
        anything but a rejection made an error. Upstream: runFilterPlugin (framework.go)."""
        status = _guard_status(lambda: pl.filter(state, pod, node_info))
        if status.is_success:
            return SUCCESS
        if not status.is_rejected:
            status = as_status(f'running "{pl.name}" filter plugin: {status.message}')
        return status.with_plugin(pl.name)

    def run_filter_plugins_with_nominated_pods(
        self, state: CycleState, pod: Pod, node_info: NodeInfo
    ) -> Status:
        """Filter with the node's nominated pods of equal or higher priority counted as running,
        then, when that passes and any were added, once more without them.

        Both passes must succeed: resources and anti-affinity are stricter with the nominated
        pods in place, pod affinity can be stricter without them, and a nominated pod may yet
        land elsewhere. Pods of lower priority are ignored: the pod may take their room.
        Upstream: RunFilterPluginsWithNominatedPods (framework.go, v1.35)
        """
        added, state_with, info_with, status = self._add_ge_nominated_pods(state, pod, node_info)
        if not status.is_success:
            return status
        status = self.run_filter_plugins(state_with, pod, info_with)
        if not status.is_success and not status.is_rejected:
            return status
        if not added or not status.is_success:
            return status
        status = self.run_filter_plugins(state, pod, node_info)
        return status

    def _add_ge_nominated_pods(
        self, state: CycleState, pod: Pod, node_info: NodeInfo
    ) -> tuple[bool, CycleState, NodeInfo, Status]:
        """Copies of the state and the NodeInfo with the node's nominated pods of at least the
        pod's priority added (through the PreFilter extensions); the originals when none is.

        Upstream: addGENominatedPods (framework.go, v1.35)
        """
        nominated = self.handle.nominated_pods_for_node(node_info.name)
        if not nominated:
            return False, state, node_info, SUCCESS
        info_out = node_info.snapshot()
        state_out = state.clone()
        added = False
        for p in ge_nominated_pods(nominated, pod):
            info_out.add_pod(p)
            status = self.run_pre_filter_extension_add_pod(state_out, pod, p, info_out)
            if not status.is_success:
                return False, state, node_info, status
            added = True
        return added, state_out, info_out, SUCCESS

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod: Pod, pod_to_add: Pod, node_info: NodeInfo
    ) -> Status:
        """Upstream: RunPreFilterExtensionAddPod (framework.go, v1.35)."""
        for pl in self.pre_filter_plugins:
            ext = pl.pre_filter_extensions()
            if ext is None or pl.name in state.skip_filter_plugins:
                continue
            status = ext.add_pod(state, pod, pod_to_add, node_info)
            if not status.is_success:
                return as_status(
                    f'running AddPod on PreFilter plugin "{pl.name}": {status.message}'
                )
        return SUCCESS

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod: Pod, pod_to_remove: Pod, node_info: NodeInfo
    ) -> Status:
        """Upstream: RunPreFilterExtensionRemovePod (framework.go, v1.35)."""
        for pl in self.pre_filter_plugins:
            ext = pl.pre_filter_extensions()
            if ext is None or pl.name in state.skip_filter_plugins:
                continue
            status = ext.remove_pod(state, pod, pod_to_remove, node_info)
            if not status.is_success:
                return as_status(
                    f'running RemovePod on PreFilter plugin "{pl.name}": {status.message}'
                )
        return SUCCESS

    def run_post_filter_plugins(
        self, state: CycleState, pod: Pod, statuses: Mapping[str, Status]
    ) -> tuple[PostFilterResult | None, Status]:
        """Upstream: RunPostFilterPlugins (framework.go, v1.35)."""
        result: PostFilterResult | None = None
        reasons: list[str] = []
        rejector = ""
        for pl in self.post_filter_plugins:
            r, s = pl.post_filter(state, pod, statuses)
            if s.is_success:
                return r, s
            if s.code is Code.UnschedulableAndUnresolvable:
                return r, s.with_plugin(pl.name)
            if not s.is_rejected:
                return None, as_status(s.message).with_plugin(pl.name)
            if r is not None:
                # A result, even with an empty name, overrides the pod's nomination
                # (upstream's ModeOverride); None leaves it as it is (ModeNoop).
                result = r
            reasons.extend(s.reasons)
            if not rejector:
                rejector = pl.name
        return result, new_status(Code.Unschedulable, *reasons).with_plugin(rejector)

    # ------------------------------------------------------------------ scoring

    def run_pre_score_plugins(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> Status:
        """Upstream: RunPreScorePlugins (framework.go, v1.35)."""
        skip: set[str] = set()
        try:
            for pl in self.pre_score_plugins:
                status = _guard_status(lambda pl=pl: pl.pre_score(state, pod, nodes))  # type: ignore[misc]
                if status.is_skip:
                    skip.add(pl.name)
                    continue
                if not status.is_success:
                    return as_status(f'running PreScore plugin "{pl.name}": {status.message}')
            return SUCCESS
        finally:
            state.skip_score_plugins = skip

    def active_score_plugins(self, state: CycleState) -> list[ScorePlugin]:
        return [pl for pl in self.score_plugins if pl.name not in state.skip_score_plugins]

    def run_score_plugins(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[list[NodePluginScores], Status]:
        """Upstream: RunScorePlugins (framework.go, v1.35)."""
        plugins = self.active_score_plugins(state)
        per_plugin: dict[str, list[NodeScore]] = {}
        for pl in plugins:
            scores: list[NodeScore] = []
            for info in nodes:
                score, status = pl.score(state, pod, info)
                if not status.is_success:
                    return [], as_status(
                        f'running Score plugins: plugin "{pl.name}" failed with: {status.message}'
                    )
                scores.append(NodeScore(info.name, score))
            per_plugin[pl.name] = scores
        for pl in plugins:
            ext = pl.score_extensions()
            if ext is None:
                continue
            status = ext.normalize_score(state, pod, per_plugin[pl.name])
            if not status.is_success:
                return [], as_status(
                    f'running Normalize on Score plugins: plugin "{pl.name}" failed with: '
                    f"{status.message}"
                )
        result: list[NodePluginScores] = []
        for index, info in enumerate(nodes):
            node_scores = NodePluginScores(info.name)
            for pl in plugins:
                score = per_plugin[pl.name][index].score
                if score > MAX_NODE_SCORE or score < MIN_NODE_SCORE:
                    return [], as_status(
                        "applying score defaultWeights on Score plugins: "
                        f'plugin "{pl.name}" returns an invalid score {score}, it should in the '
                        f"range of [{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after normalizing"
                    )
                weighted = score * self.score_plugin_weight[pl.name]
                node_scores.scores.append(PluginScore(pl.name, weighted))
                node_scores.total_score += weighted
            result.append(node_scores)
        return result, SUCCESS

    # ------------------------------------------------------------------ binding cycle

    def run_reserve_plugins_reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        for pl in self.reserve_plugins:
            status = pl.reserve(state, pod, node_name)
            if not status.is_success:
                if status.is_rejected:
                    return status.with_plugin(pl.name)
                return as_status(f'running Reserve plugin "{pl.name}": {status.message}')
        return SUCCESS

    def run_reserve_plugins_unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        for pl in reversed(self.reserve_plugins):
            pl.unreserve(state, pod, node_name)

    def run_permit_plugins(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        for pl in self.permit_plugins:
            status, _timeout = pl.permit(state, pod, node_name)
            if not status.is_success:
                if status.is_rejected:
                    return status.with_plugin(pl.name)
                if status.code is Code.Wait:
                    return as_status(
                        f'plugin "{pl.name}" asked the pod to wait; topospread does not model '
                        "waiting pods"
                    )
                return as_status(f'running Permit plugin "{pl.name}": {status.message}')
        return SUCCESS

    def run_pre_bind_plugins(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        for pl in self.pre_bind_plugins:
            status = pl.pre_bind(state, pod, node_name)
            if status.is_skip:
                continue
            if not status.is_success:
                if status.is_rejected:
                    return status.with_plugin(pl.name)
                return as_status(f'running PreBind plugin "{pl.name}": {status.message}')
        return SUCCESS

    def run_bind_plugins(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """Upstream: RunBindPlugins (framework.go, v1.35)."""
        status = SKIP
        for pl in self.bind_plugins:
            status = pl.bind(state, pod, node_name)
            if status.is_skip:
                continue
            if not status.is_success:
                if status.is_rejected:
                    return status.with_plugin(pl.name)
                return as_status(f'running Bind plugin "{pl.name}": {status.message}')
            return status
        return status

    def describe(self) -> dict[str, list[str]]:
        """Plugins per extension point, as the profile resolved them (for reports)."""
        points: dict[str, Sequence[Any]] = {
            "queueSort": self.queue_sort_plugins,
            "preEnqueue": self.pre_enqueue_plugins,
            "preFilter": self.pre_filter_plugins,
            "filter": self.filter_plugins,
            "postFilter": self.post_filter_plugins,
            "preScore": self.pre_score_plugins,
            "score": self.score_plugins,
            "reserve": self.reserve_plugins,
            "permit": self.permit_plugins,
            "preBind": self.pre_bind_plugins,
            "bind": self.bind_plugins,
        }
        out: dict[str, list[str]] = {}
        for point, plugins in points.items():
            if point == "score":
                out[point] = [f"{p.name}={self.score_plugin_weight[p.name]}" for p in plugins]
            else:
                out[point] = [p.name for p in plugins]
        return out


def _merge_pre_filter_results(
    a: PreFilterResult | None, b: PreFilterResult | None
) -> PreFilterResult | None:
    """Intersect two results; None or ``node_names is None`` means all nodes.

    Upstream: PreFilterResult.Merge (framework/interface.go, v1.35)
    """
    a_all = a is None or a.node_names is None
    b_all = b is None or b.node_names is None
    if a_all and b_all:
        return None
    if a_all:
        return b
    if b_all:
        return a
    assert a is not None and b is not None and a.node_names is not None
    assert b.node_names is not None
    return PreFilterResult(a.node_names & b.node_names)


def _guard(call: Callable[[], tuple[P, Status]]) -> tuple[P | None, Status]:
    """Turn a plugin's unexpected exception into an Error status (the framework's job)."""
    try:
        return call()
    except Exception as err:
        return None, as_status(f"{type(err).__name__}: {err}")


def _guard_status(call: Callable[[], Status]) -> Status:
    try:
        return call()
    except Exception as err:
        return as_status(f"{type(err).__name__}: {err}")


__all__ = [
    "Framework",
    "NodePluginScores",
    "PluginFactory",
    "PluginRef",
    "PluginScore",
    "Registry",
]
