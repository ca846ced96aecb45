"""Run the input mutation fuzzer (tests/input_fuzz.py) at a size of your choosing and print each
finding on one line: ``python bench/fuzz_inputs.py --seed 1 --per-target 200 [--only simulate]``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from input_fuzz import fuzz


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--per-target", type=int, default=50)
    parser.add_argument("--only", default=None, help="Targets whose name contains this.")
    args = parser.parse_args()
    report = fuzz(args.seed, args.per_target, args.only)
    for finding in report.findings:
        print(finding.line())
    for finding in report.known:
        print(f"known: {finding.line()}")
    print(
        f"{report.runs} runs, {len(report.findings)} findings ({len(report.known)} known)",
        file=sys.stderr,
    )
    return 1 if report.findings else 0


if __name__ == "__main__":
    sys.exit(main())
