"""The domain errors topospread reports to users: each ends the command with exit code 2.

A bug is any other exception; the CLI lets those surface (they are never a user's fault).
"""

from __future__ import annotations


class TopospreadError(Exception):
    """Base of every error caused by the user's input, reported as one clear message."""


class ManifestError(TopospreadError):
    """A file cannot be read or parsed, or an object in it has the wrong shape."""


class ValidationError(TopospreadError):
    """An object is well formed but the API server (or the scheduler) would reject it."""


class ConfigError(TopospreadError):
    """A scheduler configuration, plugin args or feature gate is invalid."""


class ClusterAccessError(TopospreadError):
    """A live cluster cannot be read."""


class SizeError(ManifestError):
    """An input asks for more nodes, pods or runs than a run's bounds (``--max-nodes``,
    ``--max-pods``): refused before anything is built."""
