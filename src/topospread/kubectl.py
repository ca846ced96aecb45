"""``kubectl-topospread``: the kubectl plugin. kubectl runs ``kubectl-<name>`` from PATH for
``kubectl <name> ...``, so installing the package makes ``kubectl topospread simulate|explain|
check|rebalance|schedule|sweep ...`` work.

As kubectl's own commands do, the plugin works on kubectl's current context and namespace by
default: a command given no cluster (no ``--cluster`` files, ``--kubeconfig``, ``--live``, a
generated shape, or input files where the command takes them) reads the live cluster,
read-only; ``--context NAME`` picks another context; ``-n/--namespace`` (default: the
context's namespace) qualifies ``explain --pod NAME`` and narrows ``rebalance``. Everything
else is the ``topospread`` command's, word for word. This module is the command-line layer's
second entry point, beside the cli package.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Final, NoReturn

import typer

from topospread.cli import app, exiting
from topospread.cli import main as cli_main

# Commands that read a live cluster: whether their positional arguments are input files that
# stand for the cluster (then no --live is added; simulate's timeline and check's manifests run
# on a cluster given apart), and the options that give the cluster another way.
_LIVE: Final[dict[str, tuple[bool, frozenset[str]]]] = {
    "schedule": (True, frozenset({"--nodes", "--pods", "--objects", "--cluster"})),
    "explain": (True, frozenset({"--nodes", "--pods", "--objects", "--cluster"})),
    "rebalance": (True, frozenset({"--cluster"})),
    "sweep": (True, frozenset({"--cluster"})),
    "simulate": (False, frozenset({"--cluster"})),
    "check": (False, frozenset({"--cluster", "--zones"})),
}
_GIVEN: Final = frozenset({"--live", "--kubeconfig", "--context"})


def _value_options(command: str) -> set[str]:
    """The options of ``topospread COMMAND`` that take a value (from the command itself)."""
    found = getattr(typer.main.get_command(app), "commands", {}).get(command)
    if found is None:
        return set()
    return {
        opt
        for p in found.params
        if p.param_type_name == "option" and not p.is_flag and not p.count
        for opt in p.opts
    }


class OptionWithoutValue(Exception):
    """An option that takes a value was the last word: click's message for it."""


def plugin_argv(argv: Sequence[str], namespace_of: Callable[[str | None], str | None]) -> list[str]:
    """The ``topospread`` arguments for ``kubectl topospread ARGV``. ``namespace_of(context)``
    is the context's namespace (kubectl's default), asked only when needed."""
    args = list(argv)
    if not args or args[0] not in _LIVE:
        return args
    command, rest = args[0], args[1:]
    takes_value = _value_options(command)
    namespace: str | None = None
    context: str | None = None
    kept: list[str] = []
    positional = False
    i = 0
    while i < len(rest):
        arg = rest[i]
        name, eq, value = arg.partition("=")
        takes = name in takes_value or (name in ("-n", "--namespace") and command != "rebalance")
        if takes and not eq and i + 1 == len(rest):
            # kubectl's flags and the command's options alike take the next word whatever it
            # is: the --live added below would become this option's value.
            raise OptionWithoutValue(f"Option '{name}' requires an argument.")
        if name in ("-n", "--namespace") and command != "rebalance":
            if eq:
                namespace = value
            elif i + 1 < len(rest):
                namespace = rest[i + 1]
                i += 1
            i += 1
            continue
        kept.append(arg)
        if name == "--context":
            context = value if eq else rest[i + 1] if i + 1 < len(rest) else None
        if name in takes_value and not eq and i + 1 < len(rest):
            kept.append(rest[i + 1])
            i += 1
        elif not arg.startswith("-") or arg == "-":
            positional = True
        i += 1
    files_are_input, cluster_options = _LIVE[command]
    given = any(a.partition("=")[0] in _GIVEN | cluster_options for a in kept)
    if not given and not (positional and files_are_input):
        kept.append("--live")
    if command == "explain":
        kept = _qualified_pod(kept, namespace, lambda: namespace_of(context))
    return [command, *kept]


def _qualified_pod(
    args: list[str], namespace: str | None, default: Callable[[], str | None]
) -> list[str]:
    """``--pod NAME`` as ``NAMESPACE/NAME`` (kubectl's namespace: -n, else the context's)."""
    out = list(args)
    for i, arg in enumerate(out):
        name, eq, value = arg.partition("=")
        if name != "--pod":
            continue
        pod = value if eq else out[i + 1] if i + 1 < len(out) else ""
        if not pod or "/" in pod:
            return out
        chosen = namespace or default()
        if chosen:
            if eq:
                out[i] = f"--pod={chosen}/{pod}"
            else:
                out[i + 1] = f"{chosen}/{pod}"
        return out
    return out


def main(argv: list[str] | None = None) -> None:
    """Console entry point: ``kubectl-topospread``."""
    from topospread.cluster.live import context_namespace

    args = sys.argv[1:] if argv is None else argv
    try:
        resolved = plugin_argv(args, lambda context: context_namespace(None, context))
    except OptionWithoutValue as err:
        typer.echo(f"topospread: error: {args[0]}: {err} (see --help)", err=True)
        sys.exit(2)
    cli_main(resolved, prog_name="kubectl topospread")


def console() -> NoReturn:
    """The ``kubectl-topospread`` console script: ``main``, then the process ends at once
    (``cli.exiting``)."""
    exiting.console(main)


__all__ = ["OptionWithoutValue", "console", "main", "plugin_argv"]
