"""The packages' layers, one direction (CONVENTIONS.md, rule 3): a package imports only packages
below it, so no import cycle can form between packages; only the CLI imports the CLI and terminal
libraries, and only the live reader imports a Kubernetes client. Imports inside functions count
too: a lazy import is still a dependency."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path
from typing import Final

SRC: Final = Path(__file__).resolve().parents[1] / "src" / "topospread"

# Lower numbers are lower layers; a package may import those strictly below it.
RANK: Final = {
    "errors": 0,
    "util": 0,
    "api": 1,
    # How large a run may be: counts objects of api's kinds.
    "limits": 2,
    "labels": 2,
    "nodeaffinity": 3,
    "taints": 3,
    "framework": 4,
    "plugins": 5,
    "cluster": 6,
    "conformance": 7,
    # The autoscalers' models work on the cluster alone; the simulator runs them in its loop.
    "autoscaler": 7,
    "simulator": 8,
    "analysis": 9,
    "inputs": 10,
    "render": 10,
    "cli": 11,
    "kubectl": 12,
    "__init__": 12,
    # The console scripts' entry points, above the command lines they import.
    "console": 13,
    "__main__": 14,
}
TERMINAL: Final = ("typer", "rich", "click")


def modules() -> Iterator[tuple[str, Path, ast.Module]]:
    for path in sorted(SRC.rglob("*.py")):
        parts = path.relative_to(SRC).parts
        package = parts[0] if len(parts) > 1 else parts[0].removesuffix(".py")
        yield package, path, ast.parse(path.read_text(), str(path))


def imported(tree: ast.Module) -> Iterator[str]:
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module
        elif isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)


def test_every_package_has_a_layer() -> None:
    assert {package for package, _, _ in modules()} <= set(RANK)


def test_packages_import_only_the_layers_below_them() -> None:
    wrong = []
    for package, path, tree in modules():
        for name in imported(tree):
            parts = name.split(".")
            if parts[0] != "topospread" or len(parts) < 2 or parts[1] == package:
                continue
            if RANK[parts[1]] >= RANK[package]:
                wrong.append(f"{path.relative_to(SRC)} imports {name}")
    assert wrong == []


def test_only_the_cli_imports_terminal_libraries_and_only_live_a_kubernetes_client() -> None:
    wrong = []
    for package, path, tree in modules():
        for name in imported(tree):
            root = name.split(".")[0]
            if root in TERMINAL and package not in ("cli", "kubectl"):
                wrong.append(f"{path.relative_to(SRC)} imports {name}")
            if root == "kubernetes" and path != SRC / "cluster" / "live.py":
                wrong.append(f"{path.relative_to(SRC)} imports {name}")
    assert wrong == []


# Inside ``autoscaler``: Karpenter reuses the cluster-autoscaler core's snapshot and predicate
# checker (the one scheduler framework), never the other way round.
AUTOSCALER_RANK: Final = {"clusterautoscaler": 0, "karpenter": 1}


def test_autoscaler_subpackages_import_one_direction() -> None:
    wrong = []
    for package, path, tree in modules():
        if package != "autoscaler" or len(path.relative_to(SRC).parts) < 3:
            continue
        own = path.relative_to(SRC).parts[1]
        assert own in AUTOSCALER_RANK, f"{own}: give the autoscaler sub-package a rank"
        for name in imported(tree):
            parts = name.split(".")
            if parts[:2] != ["topospread", "autoscaler"] or len(parts) < 3 or parts[2] == own:
                continue
            if AUTOSCALER_RANK[parts[2]] >= AUTOSCALER_RANK[own]:
                wrong.append(f"{path.relative_to(SRC)} imports {name}")
    assert wrong == []
