"""The console script ends at once once its command kept what it built (cli/exiting.py): the
exit functions run, the streams are flushed, the exit code is the command's, and nothing kept
is freed object by object; in-process calls keep nothing."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from topospread.cli import exiting, main

ROOT = Path(__file__).resolve().parents[1]


def _console(body: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """Run ``console`` on a ``main`` made of ``body`` in a fresh interpreter."""
    script = tmp_path / "entry.py"
    script.write_text(
        textwrap.dedent(
            """
            import atexit, sys, threading, time
            from topospread.cli.exiting import console, keep_until_exit

            class Noisy:
                def __del__(self):
                    sys.stderr.write("freed\\n")

            atexit.register(lambda: sys.stderr.write("atexit ran\\n"))

            def main():
            """
        )
        + textwrap.indent(textwrap.dedent(body), "    ")
        + "\nconsole(main)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    return subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, env=env, check=False
    )


def test_kept_objects_are_not_freed_and_the_streams_are_flushed(tmp_path: Path) -> None:
    done = _console(
        """
        sys.stdout.write("report without a newline")
        keep_until_exit(Noisy())
        """,
        tmp_path,
    )
    assert done.returncode == 0
    assert done.stdout == "report without a newline"
    assert done.stderr == "atexit ran\n"  # no "freed": the process ended without a teardown


def test_the_usual_exit_frees_what_is_not_kept(tmp_path: Path) -> None:
    """The reference for the test above: the same object, not kept, is freed."""
    done = _console("sys.stdout.write('x'); main.noisy = Noisy()", tmp_path)
    assert done.returncode == 0
    assert "freed" in done.stderr


@pytest.mark.parametrize(
    ("exit_with", "code", "stderr"),
    [
        ("sys.exit(3)", 3, "atexit ran\n"),
        ("sys.exit(None)", 0, "atexit ran\n"),
        ("sys.exit('bad input')", 1, "bad input\natexit ran\n"),
        ("raise SystemExit(258)", 2, "atexit ran\n"),
    ],
)
def test_exit_codes_are_the_commands(
    tmp_path: Path, exit_with: str, code: int, stderr: str
) -> None:
    done = _console(f"keep_until_exit(Noisy())\n{exit_with}", tmp_path)
    assert (done.returncode, done.stderr) == (code, stderr)


def test_running_threads_get_the_usual_exit(tmp_path: Path) -> None:
    """Shutdown waits for non-daemon threads; so does the console script then."""
    done = _console(
        """
        keep_until_exit(Noisy())
        threading.Thread(target=lambda: (time.sleep(0.3), print("thread done"))).start()
        """,
        tmp_path,
    )
    assert done.returncode == 0
    assert done.stdout == "thread done\n"


def test_schedule_by_the_console_script_writes_the_same_report(tmp_path: Path) -> None:
    scenario = ROOT / "examples" / "scenarios" / "zonal-volumes.yaml"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    out = tmp_path / "out.jsonl"
    with out.open("wb") as f:
        done = subprocess.run(
            [sys.executable, "-m", "topospread", "schedule", str(scenario), "-o", "jsonl"],
            stdout=f,
            stderr=subprocess.PIPE,
            env=env,
            check=False,
        )
    assert done.returncode == 0, done.stderr
    in_process = tmp_path / "in.jsonl"
    code = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from topospread.cli import main; "
            f"sys.argv = ['topospread', 'schedule', {str(scenario)!r}, '-o', 'jsonl']; main()",
        ],
        stdout=in_process.open("wb"),
        env=env,
        check=False,
    ).returncode
    assert code == 0
    assert out.read_bytes() == in_process.read_bytes()
    assert out.read_bytes().count(b"\n") > 1


def test_in_process_calls_keep_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    scenario = ROOT / "examples" / "scenarios" / "zonal-volumes.yaml"
    with pytest.raises(SystemExit) as stop:
        main(["schedule", str(scenario), "-o", "json"])
    assert stop.value.code == 0
    assert exiting._kept is None
    assert capsys.readouterr().out.startswith("{")
