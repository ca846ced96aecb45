"""The parts of a parallel read that a forked worker read, as this process finishes them."""

from __future__ import annotations

import dataclasses
import time

import pytest

from topospread.api import yaml_fast, yaml_workers
from topospread.api.decode import Object


def spy_worker_parts(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """From now on, the number of objects of each part a worker prepared, appended once this
    process has finished it (``PartReader.finish``)."""
    taken: list[int] = []
    finish = yaml_fast.PART_READER.finish

    def counted(payload: bytes) -> list[Object] | None:
        objs = finish(payload)
        if objs is not None:
            taken.append(len(objs))
        return objs

    monkeypatch.setattr(
        yaml_fast, "PART_READER", dataclasses.replace(yaml_fast.PART_READER, finish=counted)
    )
    return taken


def until_a_worker_claims_a_part() -> None:
    """A read's ``meanwhile``: this process waits for a worker to claim a part before it
    claims its own (else, on a busy machine, it may read them all first)."""
    work = yaml_workers._WORK
    assert work is not None, "called outside a parallel read"
    parts = len(work.chunks)
    deadline = time.monotonic() + 60
    while work.claims._state[1] == parts and time.monotonic() < deadline:
        time.sleep(0)
