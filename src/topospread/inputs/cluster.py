"""Where a command's cluster comes from: saved ``kubectl get -o yaml|json`` output, or a live
cluster read through its kubeconfig (read-only, ``cluster.live``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from topospread.errors import ManifestError
from topospread.inputs.manifests import Located, read_manifests

Warn = Callable[[str], None]

# How the commands name the live options in their messages.
LIVE_FLAGS = "--live, --kubeconfig, --context"


def ignore(_warning: str) -> None:
    """The default for ``warn``: warnings dropped."""


@dataclass(frozen=True, slots=True)
class ClusterSource:
    """A cluster given as files (``--cluster``), or live (``--live``, ``--kubeconfig``,
    ``--context``); at most one of the two."""

    files: tuple[Path, ...] = ()
    live: bool = False
    kubeconfig: str | None = None
    context: str | None = None

    @property
    def is_live(self) -> bool:
        """Whether a live cluster is asked for (any of its options names one)."""
        return self.live or self.kubeconfig is not None or self.context is not None

    @property
    def given(self) -> bool:
        return bool(self.files) or self.is_live

    def read(self, warn: Warn = ignore) -> list[Located]:
        """Every object of the cluster, each with where it came from. A live cluster's
        resources that could not be listed but are not needed are left out, each with a
        warning passed to ``warn``."""
        if self.files and self.is_live:
            raise ManifestError(
                "give the starting cluster either as --cluster files or live "
                f"({LIVE_FLAGS}), not both"
            )
        if self.files:
            return read_manifests(self.files)
        if not self.is_live:
            return []
        from topospread.cluster.live import read_cluster

        found = read_cluster(self.kubeconfig, self.context)
        for warning in found.warnings:
            warn(warning)
        return [(found.source, obj) for obj in found.objects]
