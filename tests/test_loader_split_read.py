"""A part read half by a forked worker and half here (``yaml_fast.PART_READER``): the worker
makes the field validation of its objects (``decode.check_json``), this process decodes them
(``load_json(checked=True)``). Together they accept exactly the text ``load_json`` accepts,
into the same objects; whatever either refuses sends the file down the exact path, which
says what is wrong as it would have."""

from __future__ import annotations

import contextlib
import copy
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from test_loader_fast_path import exact, kubectl_list, outcome, pod_manifest, tiny_parts
from topospread.api import yaml_fast
from topospread.api.decode import Object, check_json, load_json
from topospread.api.strict import FieldValidation, field_validation

__all__ = ["tiny_parts"]  # a fixture, used by name


@pytest.fixture(autouse=True)
def fast_path_for_any_size(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(yaml_fast, "_FAST_MIN_BYTES", 0)


def _set(manifest: dict[str, Any], path: tuple[str | int, ...], value: Any) -> dict[str, Any]:
    out = copy.deepcopy(manifest)
    at: Any = out
    for key in path[:-1]:
        at = at[key]
    at[path[-1]] = value
    return out


BAD: dict[str, tuple[tuple[str | int, ...], Any]] = {
    "an unknown field": (("spec", "nodeNam"), "n1"),
    "an unknown field in a container": (("spec", "containers", 0, "imagee"), "x"),
    "a number for a string": (("spec", "nodeName"), 12),
    "a list for a quantity": (("spec", "containers", 0, "resources"), {"requests": {"cpu": [1]}}),
    "a list for a map": (("metadata", "labels"), ["a"]),
    "a string for a list": (("spec", "containers"), "c"),
}


@pytest.mark.parametrize("where", [1, 10], ids=["in this process's part", "in a worker's part"])
@pytest.mark.parametrize("bad", list(BAD))
def test_a_bad_object_in_a_cut_file_is_said_as_the_exact_path_says_it(
    bad: str, where: int, tiny_parts: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    pods = [pod_manifest(i, {"app": "web"}) for i in range(12)]
    pods[where] = _set(pods[where], *BAD[bad])
    text = kubectl_list(pods)
    said = outcome(text)
    assert tiny_parts and tiny_parts[0] > 2, "the text was not cut"
    assert said[0] == "error", said
    assert said == exact(text, monkeypatch)


def test_a_worker_prepares_what_this_process_then_finishes_into_the_parts_objects() -> None:
    text = kubectl_list([pod_manifest(i, {"app": "web"}) for i in range(5)]).encode()
    scratch = yaml_fast._Scratch()
    whole = yaml_fast._decode_part(text, scratch)
    payload = yaml_fast._prepare_part(text, scratch)
    assert whole is not None and payload is not None
    assert yaml_fast._finish_part(payload) == whole
    bad = text.replace(b"nodeName: n1", b"nodeNam: n1", 1)
    assert yaml_fast._prepare_part(bad, scratch) is None, "the worker's checks let it through"


def _split(raw: bytes) -> list[Object] | str:
    try:
        check_json(raw)
        out: list[Object] = []
        load_json(raw, "t.json", out, machine=True, checked=True)
    except Exception as err:
        return f"refused: {type(err).__name__}"
    return out


def _whole(raw: bytes) -> list[Object] | str:
    try:
        out: list[Object] = []
        load_json(raw, "t.json", out, machine=True)
    except Exception as err:
        return f"refused: {type(err).__name__}"
    return out


values = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.sampled_from(["", "x", "1", "100m"]),
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.sampled_from("ab"), inner),
    max_leaves=4,
)
# Places in a pod, some known fields and some not, some in lists.
places = st.sampled_from(
    [
        ("metadata", "name"),
        ("metadata", "labels"),
        ("metadata", "annotations"),
        ("metadata", "uid"),
        ("metadata", "bogus"),
        ("spec", "nodeName"),
        ("spec", "priority"),
        ("spec", "tolerations"),
        ("spec", "containers"),
        ("spec", "containers", 0, "name"),
        ("spec", "containers", 0, "ports"),
        ("spec", "containers", 0, "resources"),
        ("spec", "containers", 0, "bogus"),
        ("spec", "affinity"),
        ("spec", "bogus"),
        ("status",),
        ("status", "phase"),
        ("status", "bogus"),
        ("bogus",),
    ]
)


@settings(max_examples=300, deadline=None)
@given(
    changes=st.lists(st.tuples(places, values), max_size=3),
    as_list=st.booleans(),
    mode=st.sampled_from([FieldValidation.STRICT, FieldValidation.WARN, FieldValidation.IGNORE]),
)
def test_the_checks_and_the_decode_apart_accept_what_load_json_accepts_into_the_same_objects(
    changes: list[tuple[tuple[str | int, ...], Any]], as_list: bool, mode: FieldValidation
) -> None:
    manifest = pod_manifest(0, {"app": "web"})
    for path, value in changes:
        # A place that is gone (a list made a number) is left as it is.
        with contextlib.suppress(KeyError, IndexError, TypeError):
            manifest = _set(manifest, path, value)
    doc: Any = {"apiVersion": "v1", "kind": "List", "items": [manifest]} if as_list else manifest
    raw = msgspec.json.encode(doc)
    with field_validation(mode) as whole_warned:
        whole = _whole(raw)
    with field_validation(mode) as split_warned:
        split = _split(raw)
    if isinstance(whole, str) or isinstance(split, str):
        assert isinstance(whole, str) == isinstance(split, str), (whole, split)
    else:
        assert [msgspec.to_builtins(o) for o in split] == [msgspec.to_builtins(o) for o in whole]
    # A warning sends the parallel read down the exact path: the split warns when load_json
    # does (it may say more: its checks are made whether or not the object decodes).
    assert bool(whole_warned) <= bool(split_warned)
