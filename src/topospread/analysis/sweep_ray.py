"""The sweep on a Ray cluster: placeholder until the Ray backend lands (see ray_backend)."""

from __future__ import annotations

from topospread.analysis.sweep import Backend
from topospread.errors import ManifestError


def ray_backend(address: str) -> Backend:
    raise ManifestError(f"--ray {address}: the Ray backend is not available yet")
