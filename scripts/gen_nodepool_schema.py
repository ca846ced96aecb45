"""Write src/topospread/autoscaler/karpenter/nodepool_schema.json: the OpenAPI v3 schema of
Karpenter's NodePool CRD (``karpenter.sh/v1``), without its descriptions and printer columns.

topospread.autoscaler.karpenter.nodepool_validation checks NodePool manifests against it as the
API server does for the CRD (strict decoding, the schema's checks, the CEL rules it knows).
Run it with the CRD of the Karpenter release to mirror, e.g.::

    git -C karpenter show v1.14.1:pkg/apis/crds/karpenter.sh_nodepools.yaml > nodepools.yaml
    python scripts/gen_nodepool_schema.py nodepools.yaml v1.14.1

The whole root is kept: ``status`` too, as a manifest read from a cluster holds it (strict
decoding knows its fields; the API server resets it on a create before validating).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import yaml

OUT = (
    Path(__file__).resolve().parent.parent
    / "src/topospread/autoscaler/karpenter/nodepool_schema.json"
)
# Keys the API server's validation reads (and the pruning that finds unknown fields).
_KEEP = frozenset(
    {
        "type",
        "properties",
        "items",
        "additionalProperties",
        "anyOf",
        "enum",
        "pattern",
        "format",
        "minimum",
        "maximum",
        "minItems",
        "maxItems",
        "minLength",
        "maxLength",
        "maxProperties",
        "required",
        "default",
        "nullable",
        "x-kubernetes-int-or-string",
        "x-kubernetes-list-type",
        "x-kubernetes-validations",
    }
)


def _strip(node: Any) -> Any:
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key not in _KEEP:
            continue
        if key == "properties":
            out[key] = {name: _strip(prop) for name, prop in value.items()}
        elif key in ("items", "additionalProperties"):
            out[key] = _strip(value)
        elif key == "anyOf":
            out[key] = [_strip(v) for v in value]
        else:
            out[key] = value
    return out


def main(crd_path: str, release: str) -> None:
    crd = yaml.safe_load(Path(crd_path).read_text())
    [version] = [v for v in crd["spec"]["versions"] if v["name"] == "v1"]
    root = version["schema"]["openAPIV3Schema"]
    schema = {"release": release, "schema": _strip(root)}
    OUT.write_text(json.dumps(schema, indent=1, sort_keys=False) + "\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
