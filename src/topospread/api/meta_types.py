"""meta/v1's objects that every kind shares: object metadata, owner references and label
selectors. Below ``volumes`` (a generic ephemeral volume's claim template carries a selector)
and re-exported by ``types``.
"""

from __future__ import annotations

from topospread.api.base import _Obj


class OwnerReference(_Obj, frozen=True):
    api_version: str = ""
    kind: str = ""
    name: str = ""
    uid: str = ""
    controller: bool | None = None
    block_owner_deletion: bool | None = None


class ObjectMeta(_Obj, frozen=True):
    name: str = ""
    generate_name: str = ""
    namespace: str = ""
    uid: str = ""
    labels: dict[str, str] = {}
    annotations: dict[str, str] = {}
    owner_references: list[OwnerReference] = []
    # Kept as the manifest's text: only its presence matters to the scheduler.
    deletion_timestamp: str | None = None
    creation_timestamp: str | None = None


class LabelSelectorRequirement(_Obj, frozen=True):
    key: str = ""
    operator: str = ""
    values: list[str] = []


class LabelSelector(_Obj, frozen=True):
    match_labels: dict[str, str] = {}
    match_expressions: list[LabelSelectorRequirement] = []
