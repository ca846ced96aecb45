"""The command line's values coerced without Typer's pydantic adapters: for every input, the
same value or the same error as Typer's own coercion; the command-line errors word for word;
a command run with good values never imports pydantic."""

from __future__ import annotations

import enum
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Literal

import pytest
import typer
import typer.core
from hypothesis import given, settings
from hypothesis import strategies as st
from typer import _coercion
from typer._click import Context
from typer._click.exceptions import BadParameter
from typer.core import TyperCommand
from typer.models import OptionInfo

from test_cli import run
from topospread.cli import coercion

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = str(ROOT / "examples" / "scenarios" / "docs-two-constraints.yaml")


class Colour(enum.Enum):
    RED = "red"
    BLUE = "blue"


CASES = {
    "int": (int, OptionInfo()),
    "int from 1": (int, OptionInfo(min=1)),
    "int in 0..100": (int, OptionInfo(min=0, max=100)),
    "float": (float, OptionInfo()),
    "float in -1.5..2.5": (float, OptionInfo(min=-1.5, max=2.5)),
    "str": (str, OptionInfo()),
    "bool": (bool, OptionInfo()),
    "Literal": (Literal["text", "json", "yaml"], OptionInfo()),
    "Literal, any case": (Literal["text", "json"], OptionInfo(case_sensitive=False)),
    "Enum": (Colour, OptionInfo()),
    "Path": (Path, OptionInfo()),
    "Path, existing": (Path, OptionInfo(exists=True)),
    "Path, a file": (Path, OptionInfo(exists=True, dir_okay=False)),
    "Path, a directory": (Path, OptionInfo(file_okay=False)),
    "list[Path]": (list[Path], OptionInfo()),
    "list[str]": (list[str], OptionInfo()),
    "list[int]": (list[int], OptionInfo(max=9)),
}

_CTX = Context(TyperCommand("t"))
_PARAM: Any = None  # Typer's messages name no parameter when coercing outside a command


def outcome(param: _coercion.RuntimeParam, value: Any) -> tuple[Any, ...]:
    """What coercing ``value`` gives: the value with its type, or the error's message."""
    try:
        found = param._coerce_value(value, param=_PARAM, ctx=_CTX)
    except BadParameter as err:
        return ("error", err.format_message())
    except Exception as err:  # compared, whatever it is
        return ("raised", type(err), str(err))
    kinds = [type(v) for v in found] if type(found) is list else None
    return ("value", type(found), kinds, repr(found))  # repr: NaN is NaN


def values(tmp: Path) -> st.SearchStrategy[Any]:
    """Command-line texts and defaults: numbers, near-numbers, choices, paths, anything."""
    file, directory = tmp / "f.yaml", tmp / "d"
    file.touch()
    directory.mkdir(exist_ok=True)
    texts = st.one_of(
        st.text(max_size=12),
        st.from_regex(
            r"[ +-]?[0-9_]{0,22}(\.[0-9]{0,18})?([eE][+-]?[0-9]{1,3})?\s?", fullmatch=True
        ),
        st.sampled_from(
            [
                "text",
                "JSON",
                "red",
                "BLUE",
                "true",
                "0",
                "1",
                "yes",
                "off",
                "inf",
                "nan",
                "-",
                "",
                ".",
                "a//b/.",
                str(file),
                f"{file}/",
                str(directory),
                f"{directory}/",
                str(tmp / "missing"),
                "\u0663",
                "a\udcff",
            ]
        ),
    )
    others = st.one_of(
        st.integers(-(10**20), 10**20),
        st.floats(),
        st.booleans(),
        st.just(Colour.RED),
        st.just(Path("x")),
    )
    one = st.one_of(texts, others)
    return st.one_of(one, st.lists(texts, max_size=3), st.tuples(texts, texts))


@pytest.fixture(scope="module")
def tmp(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("coercion")


@pytest.mark.parametrize("case", CASES)
def test_every_value_coerces_as_typer_coerces_it(case: str, tmp: Path) -> None:
    annotation, info = CASES[case]
    descriptor = _coercion.resolve_type_descriptor(annotation, info)
    ours = coercion.build_runtime_param(descriptor)
    assert isinstance(ours, coercion.ShortcutRuntimeParam)
    typers = _coercion.build_runtime_param(descriptor)

    @settings(max_examples=300, deadline=None)
    @given(values(tmp))
    def same(value: Any) -> None:
        assert outcome(ours, value) == outcome(typers, value)

    same()


@pytest.mark.parametrize(
    ("case", "value", "expected"),
    [
        pytest.param("int", "42", 42, id="a whole number"),
        pytest.param("int", "-7", -7, id="a negative number"),
        pytest.param("int in 0..100", "100", 100, id="a number at the top of its range"),
        pytest.param("float", "2.5", 2.5, id="a decimal"),
        pytest.param("str", "x", "x", id="a text"),
        pytest.param("Literal", "json", "json", id="a choice"),
        pytest.param("Enum", "blue", Colour.BLUE, id="an Enum's value"),
        pytest.param("Path", "a/b.yaml", Path("a/b.yaml"), id="a path"),
        pytest.param("list[Path]", ("a", "b"), [Path("a"), Path("b")], id="paths"),
    ],
)
def test_plain_values_need_no_pydantic(case: str, value: Any, expected: Any) -> None:
    annotation, info = CASES[case]
    ours = coercion.build_runtime_param(_coercion.resolve_type_descriptor(annotation, info))
    assert outcome(ours, value)[-1] == repr(expected)
    assert "typer_param" not in ours.__dict__  # Typer's adapter never built


def test_other_types_are_left_to_typer() -> None:
    for annotation, info in [
        (tuple[int, str], OptionInfo()),
        (int, OptionInfo(min=0, clamp=True)),
        (str, OptionInfo(parser=str.upper)),
        (typer.FileText, OptionInfo()),
    ]:
        descriptor = _coercion.resolve_type_descriptor(annotation, info)
        built = coercion.build_runtime_param(descriptor)
        assert not isinstance(built, coercion.ShortcutRuntimeParam), annotation


def test_installed_only_on_the_typer_version_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    assert typer.__version__ == coercion.TYPER_VERSION  # pinned in pyproject.toml
    assert typer.core.build_runtime_param is coercion.build_runtime_param  # installed by the CLI
    monkeypatch.setattr(typer.core, "build_runtime_param", _coercion.build_runtime_param)
    monkeypatch.setattr(typer, "__version__", "0.30.0")
    assert coercion.install() is False
    assert typer.core.build_runtime_param is _coercion.build_runtime_param


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        pytest.param(
            ["schedule", "--seed", "1e1"],
            "schedule: Invalid value for '--seed': Input should be a valid integer, unable to "
            "parse string as an integer",
            id="not a whole number",
        ),
        pytest.param(
            ["schedule", "--percentage-of-nodes-to-score", "101"],
            "schedule: Invalid value for '--percentage-of-nodes-to-score': Input should be less "
            "than or equal to 100",
            id="above the range",
        ),
        pytest.param(
            ["schedule", "--percentage-of-nodes-to-score", "-1"],
            "schedule: Invalid value for '--percentage-of-nodes-to-score': Input should be "
            "greater than or equal to 0",
            id="below the range",
        ),
        pytest.param(
            ["sweep", SCENARIO, "--jobs", "0"],
            "sweep: Invalid value for '--jobs' / '-j': Input should be greater than or equal to 1",
            id="below a range with no top",
        ),
        pytest.param(
            ["schedule", "--tie-break", "NAME"],
            "schedule: Invalid value for '--tie-break': Value error, 'NAME' is not one of "
            "'random', 'name'.",
            id="a choice in the wrong case",
        ),
        pytest.param(
            ["schedule", "-o", ""],
            "schedule: Invalid value for '--output' / '-o': Value error, '' is not one of "
            "'text', 'json', 'jsonl', 'yaml', 'html'.",
            id="an empty choice",
        ),
    ],
)
def test_bad_values_keep_typers_messages(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(argv, capsys) == (2, "", f"topospread: error: {message} (see --help)\n")


def test_missing_files_are_the_readers_to_report(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["schedule", "--config", "/nonexistent/c.yaml", SCENARIO], capsys)
    assert (code, out) == (2, "")
    assert err.startswith("topospread: error: /nonexistent/c.yaml: ")


def test_a_run_with_good_values_never_imports_pydantic() -> None:
    script = (
        "import sys\n"
        "from topospread.cli import main\n"
        "try:\n"
        f"    main(['schedule', {SCENARIO!r}, '-o', 'json', '--seed', '3', '--tie-break', 'name',"
        " '--percentage-of-nodes-to-score', '50', '--zone-key', 'zone'])\n"
        "except SystemExit as e:\n"
        "    assert e.code == 0, e.code\n"
        "print('pydantic' in sys.modules)\n"
    )
    assert last_line_in_a_fresh_interpreter(script) == "False"


def last_line_in_a_fresh_interpreter(script: str) -> str:
    """The last line ``script`` prints, run by a new interpreter on this checkout's src/."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True
    )
    return done.stdout.splitlines()[-1]
