"""Write src/topospread/api/fields.json: every field name of every built-in kind, from the
official Python client's models for the Kubernetes release the scheduler mirrors.

The strict decoder (topospread.api.strict) checks manifests against it as the API server's
strict field validation does: an unknown field anywhere in a built-in object is an error.
Run it with the client's wheel unpacked, e.g.::

    pip download --no-deps kubernetes==35.0.0   # the client of Kubernetes v1.35
    unzip -q kubernetes-35.0.0-py2.py3-none-any.whl -d /tmp/k8s
    python scripts/gen_field_schema.py /tmp/k8s 35.0.0

Each type maps a JSON field name to: null (a scalar, a list of scalars, a map of scalars or a
free-form value such as IntOrString or RawExtension: not looked into), a type name (an
object), ["T"] (a list of T) or {"*": "T"} (a map of T).
"""

from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "src/topospread/api/fields.json"
_LIST = re.compile(r"list\[(\w+)\]$")
_MAP = re.compile(r"dict\(str, (\w+)\)$")
# Bodies of subresources (scale, eviction, token), not kinds served at the API class's path.
_SUBRESOURCE_BODIES = frozenset({"V1Scale", "V1Eviction", "AuthenticationV1TokenRequest"})


def _class_dicts(path: Path) -> tuple[str, dict[str, str], dict[str, str]] | None:
    tree = ast.parse(path.read_text())
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            types: dict[str, str] = {}
            names: dict[str, str] = {}
            for stmt in node.body:
                if isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Name):
                    target = stmt.targets[0].id
                    if target in ("openapi_types", "attribute_map"):
                        value = ast.literal_eval(stmt.value)
                        (types if target == "openapi_types" else names).update(value)
            return node.name, types, names
    return None


def main(root: str, version: str) -> None:
    client = Path(root) / "kubernetes/client"
    models: dict[str, dict[str, str]] = {}
    for path in sorted((client / "models").glob("*.py")):
        found = _class_dicts(path)
        if found is None:
            continue
        name, types, names = found
        models[name] = {names[attr]: types[attr] for attr in types}
    known = set(models)

    def ref(type_name: str) -> object:
        if type_name in known:
            return type_name
        if (m := _LIST.match(type_name)) and m.group(1) in known:
            return [m.group(1)]
        if (m := _MAP.match(type_name)) and m.group(1) in known:
            return {"*": m.group(1)}
        return None

    # Each kind's group and version from the API class that creates it.
    kinds: dict[str, str] = {}
    for path in sorted((client / "api").glob("*_api.py")):
        text = path.read_text()
        m = re.search(r"'/api(?:s/([a-z0-9.]+))?/(v[0-9a-z]+)/", text)
        if m is None:
            continue
        group_version = f"{m.group(1)}/{m.group(2)}" if m.group(1) else m.group(2)
        for model in sorted(set(re.findall(r":param (\w+) body: \(required\)", text))):
            fields = models.get(model, {})
            if model in _SUBRESOURCE_BODIES:
                continue
            if "kind" in fields and "apiVersion" in fields and not model.endswith("List"):
                kind = re.sub(r"^(?:V\d+(?:(?:alpha|beta)\d+)?|\w+V\d+)", "", model)
                kinds[f"{group_version} {kind}"] = model

    # Only the types reachable from a kind.
    keep: dict[str, dict[str, object]] = {}
    todo = sorted(set(kinds.values()))
    while todo:
        name = todo.pop()
        if name in keep:
            continue
        keep[name] = fields = {key: ref(t) for key, t in sorted(models[name].items())}
        for value in fields.values():
            for inner in [value] if isinstance(value, str) else value or ():
                target = value["*"] if isinstance(value, dict) else inner
                if isinstance(target, str) and target not in keep:
                    todo.append(target)
    out = {
        "client": version,
        "kinds": dict(sorted(kinds.items())),
        "types": dict(sorted(keep.items())),
    }
    OUT.write_text(json.dumps(out, separators=(",", ":"), sort_keys=False) + "\n")
    print(f"{OUT}: {len(kinds)} kinds, {len(keep)} types")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
