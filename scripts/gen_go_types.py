"""Write src/topospread/api/go_fields.json: the Go type of every field of every schema type of
fields.json, read from the Go sources of k8s.io/api and k8s.io/apimachinery.

The strict decoder (topospread.api.strict) types each leaf from it, so that a value of the wrong
JSON type in a field we never read is refused as the API server's decoder refuses it, and its
error names the Go type as ``reflect.Type.String()`` does (``int64``, ``v1.RestartPolicy``,
``map[string]string``, ``[]uint8``, ``resource.Quantity``). Run it with the two repositories
cloned (any clone holding the tags), e.g.::

    git clone https://github.com/kubernetes/api /tmp/api
    git clone https://github.com/kubernetes/apimachinery /tmp/apimachinery
    python scripts/gen_go_types.py /tmp/api /tmp/apimachinery v0.35.4

Each schema type (``V1PodSpec``) is matched to the Go struct of the same name (the client's
prefix dropped: ``V1``, ``AppsV1``, ``V1beta1``...) whose JSON field set is the model's, in a
package of the model's version; when several match and disagree on a field, that field is left
untyped. Embedded structs are inlined, as encoding/json promotes their fields. A type's own
UnmarshalJSON makes it opaque except for the ones the decoder models (Time, MicroTime, Duration,
Quantity, IntOrString); a type the sources do not define (a CRD's JSONSchemaProps lives in
apiextensions-apiserver, not read here) leaves its fields untyped, never guessed.

Output: ``{"structs": {schema type: Go struct name}, "fields": {schema type: {json name:
[Go type, shape]}}}`` where the shape is the type as the decoder sees it: a Go kind (``string``,
``bool``, ``int32``, ``float64``...), ``[]S`` or ``map[string]S`` of a shape, ``bytes``,
``struct`` (an object of the schema), or one of ``Time``, ``MicroTime``, ``Duration``,
``Quantity``, ``IntOrString``, ``any`` (anything JSON: RawExtension, FieldsV1).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "src/topospread/api"
OUT = ROOT / "go_fields.json"

_TYPE = re.compile(r"^type\s+(\w+)\s+(.+?)\s*$", re.M)
_IMPORT = re.compile(r'^\s*(?:(\w+)\s+)?"([^"]+)"\s*$', re.M)
_FIELD = re.compile(r"^\s*(?:(\w+)\s+)?([\w.*\[\]]+(?:\[[\w.]+\][\w.*\[\]]+)?)\s*(?:`([^`]*)`)?")
_JSON_TAG = re.compile(r'json:"([^"]*)"')
_MODEL = re.compile(r"^(?:[A-Z][a-z]+)*V(\d+(?:alpha\d+|beta\d+)?)(\w+)$")
_BUILTIN = frozenset(
    {"string", "bool", "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16"}
    | {"uint32", "uint64", "float32", "float64", "byte"}
)
# Types with their own UnmarshalJSON whose rules the strict decoder models (by Go name).
_MODELLED = {
    "v1.Time": "Time",
    "v1.MicroTime": "MicroTime",
    "v1.Duration": "Duration",
    "resource.Quantity": "Quantity",
    "intstr.IntOrString": "IntOrString",
}
_META = "k8s.io/apimachinery/pkg/apis/meta/v1"
# apimachinery packages read: path -> folder in the repository.
_MACHINERY = {
    _META: "pkg/apis/meta/v1",
    "k8s.io/apimachinery/pkg/api/resource": "pkg/api/resource",
    "k8s.io/apimachinery/pkg/util/intstr": "pkg/util/intstr",
    "k8s.io/apimachinery/pkg/runtime": "pkg/runtime",
    "k8s.io/apimachinery/pkg/types": "pkg/types",
}


@dataclass
class Package:
    """One Go package's type declarations (name -> definition text) and imports."""

    path: str
    types: dict[str, str] = field(default_factory=dict)
    imports: dict[str, str] = field(default_factory=dict)  # alias -> package path
    custom: set[str] = field(default_factory=set)  # types with their own UnmarshalJSON/Text

    @property
    def name(self) -> str:
        return self.path.rsplit("/", 1)[-1]


def _git(repo: str, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", repo, *args], check=True, capture_output=True, text=True
    ).stdout


def _read_package(repo: str, tag: str, folder: str, path: str) -> Package:
    pkg = Package(path)
    names = _git(repo, "ls-tree", "--name-only", f"{tag}:{folder}").split()
    for name in names:
        if not name.endswith(".go") or name.endswith("_test.go") or "generated" in name:
            continue
        text = _git(repo, "show", f"{tag}:{folder}/{name}")
        text = re.sub(r"//[^\n]*", "", re.sub(r"/\*.*?\*/", "", text, flags=re.S))
        block = re.search(r"^import\s*\((.*?)^\)", text, re.M | re.S)
        imports = block.group(1) if block else ""
        imports += "\n".join(re.findall(r'^import\s+((?:\w+\s+)?"[^"]+")', text, re.M))
        for alias, target in _IMPORT.findall(imports):
            pkg.imports[alias or target.rsplit("/", 1)[-1]] = target
        pkg.custom.update(
            re.findall(r"^func \(\w+ \*?(\w+)\) Unmarshal(?:JSON|Text)\(", text, re.M)
        )
        for m in _TYPE.finditer(text):
            name_, rest = m.group(1), m.group(2)
            if rest.startswith("struct"):
                body = text[m.end() :]
                depth, end = 1, 0
                for i, ch in enumerate(body):
                    depth += ch == "{"
                    depth -= ch == "}"
                    if depth == 0:
                        end = i
                        break
                pkg.types[name_] = "struct{" + body[:end] + "}"
            elif not rest.startswith(("interface", "func")):
                pkg.types[name_] = rest  # "= T" for an alias
    return pkg


class Universe:
    """Every package read, and the Go types resolved within them."""

    def __init__(self, packages: dict[str, Package]) -> None:
        self.packages = packages

    def lookup(self, pkg: Package, ref: str) -> tuple[Package, str] | None:
        """A (possibly qualified) type name as (its package, its name), or None if unknown."""
        if "." in ref:
            alias, name = ref.split(".", 1)
            target = self.packages.get(pkg.imports.get(alias, ""))
            found = (target, name) if target is not None and name in target.types else None
        else:
            found = (pkg, ref) if ref in pkg.types else None
        if found is not None and found[0].types[found[1]].startswith("="):
            return self.lookup(found[0], found[0].types[found[1]][1:].strip())
        return found

    def go_name(self, pkg: Package, text: str) -> str:
        """``text`` (a type as written in ``pkg``) as reflect.Type.String() names it."""
        if text.startswith("*"):
            return "*" + self.go_name(pkg, text[1:])
        if text.startswith("[]"):
            return "[]" + self.go_name(pkg, text[2:])
        if text.startswith("map["):
            key, value = _split_map(text)
            return f"map[{self.go_name(pkg, key)}]{self.go_name(pkg, value)}"
        if text in _BUILTIN:
            return "uint8" if text == "byte" else text
        found = self.lookup(pkg, text)
        if found is not None:  # an alias is named as the type it stands for
            return f"{found[0].name}.{found[1]}"
        if "." in text:
            alias, name = text.split(".", 1)
            return f"{pkg.imports.get(alias, alias).rsplit('/', 1)[-1]}.{name}"
        return f"{pkg.name}.{text}"

    def shape(self, pkg: Package, text: str, seen: frozenset[str] = frozenset()) -> str | None:
        """How the decoder sees a type: see the module docstring; None when not known."""
        text = text.removeprefix("*")
        if text in _BUILTIN:
            return "uint8" if text == "byte" else text
        if text.startswith("[]"):
            inner = text[2:].removeprefix("*")
            if inner in ("byte", "uint8"):
                return "bytes"
            got = self.shape(pkg, inner, seen)
            return None if got is None else f"[]{got}"
        if text.startswith("map["):
            key, value = _split_map(text)
            key_shape = self.shape(pkg, key, seen)
            got = self.shape(pkg, value, seen)
            return None if got is None or key_shape != "string" else f"map[string]{got}"
        name = self.go_name(pkg, text)
        if name in _MODELLED:
            return _MODELLED[name]
        found = self.lookup(pkg, text)
        if found is None or name in seen:
            return None
        where, local = found
        if local in where.custom:
            return "any" if name in ("runtime.RawExtension", "v1.FieldsV1") else None
        definition = where.types[local]
        if definition.startswith("struct"):
            return "struct"
        return self.shape(where, definition, seen | {name})

    def fields(self, pkg: Package, name: str) -> dict[str, tuple[Package, str]] | None:
        """The JSON fields of a struct, embedded structs inlined: name -> (package, type)."""
        body = pkg.types.get(name, "")
        if not body.startswith("struct{"):
            found = self.lookup(pkg, body.removeprefix("=").strip())
            return None if found is None or found == (pkg, name) else self.fields(*found)
        out: dict[str, tuple[Package, str]] = {}
        for line in body[7:-1].splitlines():
            m = _FIELD.match(line)
            if m is None or not line.strip():
                continue
            field_name, type_text, tags = m.group(1), m.group(2), m.group(3) or ""
            tag = _JSON_TAG.search(tags)
            json_name = tag.group(1).split(",")[0] if tag else None
            if json_name == "-":
                continue
            if field_name is None:  # embedded: its fields promoted unless a name is given
                if json_name:
                    out[json_name] = (pkg, type_text)
                    continue
                found = self.lookup(pkg, type_text.removeprefix("*"))
                if found is None:
                    return None
                inner = self.fields(*found)
                if inner is None:
                    return None
                for key, value in inner.items():
                    out.setdefault(key, value)
                continue
            if not field_name[0].isupper():
                continue
            out[json_name or field_name] = (pkg, type_text)
        return out


def _split_map(text: str) -> tuple[str, str]:
    depth = 0
    for i, ch in enumerate(text):
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
            if depth == 0:
                return text[4:i], text[i + 1 :]
    raise ValueError(text)


def _ref_shape(ref: object, shape: str) -> str | None:
    """The shape a schema reference demands (a leaf: any shape without a struct in it)."""
    if ref is None:
        return None if "struct" in shape else shape
    if isinstance(ref, str):
        return "struct"
    return "[]struct" if isinstance(ref, list) else "map[string]struct"


def main(api_repo: str, machinery_repo: str, tag: str) -> None:
    packages: dict[str, Package] = {}
    for path, folder in _MACHINERY.items():
        packages[path] = _read_package(machinery_repo, tag, folder, path)
    for line in _git(api_repo, "ls-tree", "-r", "--name-only", tag).split():
        m = re.fullmatch(r"(\w+/v\w+)/types\.go", line)
        if m:
            path = f"k8s.io/api/{m.group(1)}"
            packages[path] = _read_package(api_repo, tag, m.group(1), path)
    universe = Universe(packages)
    schema = json.loads((ROOT / "fields.json").read_text())["types"]
    structs: dict[str, str] = {}
    typed: dict[str, dict[str, list[str]]] = {}
    for model, model_fields in sorted(schema.items()):
        m = _MODEL.match(model)
        if m is None:
            continue
        version, name = f"v{m.group(1)}", m.group(2)
        candidates = []
        for pkg in packages.values():
            if pkg.name != version or name not in pkg.types:
                continue
            found = universe.fields(pkg, name)
            if found is not None and set(found) == set(model_fields):
                candidates.append(found)
        if not candidates:
            continue
        structs[model] = name
        out: dict[str, list[str]] = {}
        for key in sorted(model_fields):
            seen = {
                (universe.go_name(p, t).removeprefix("*"), universe.shape(p, t))
                for p, t in (c[key] for c in candidates)
            }
            if len(seen) != 1:
                continue  # the matching structs disagree: not typed
            go_type, shape = seen.pop()
            if shape is None:
                continue
            if shape != _ref_shape(model_fields[key], shape):
                continue  # the client's model and the Go source disagree: not typed
            out[key] = [go_type, shape]
        typed[model] = out
    data = {"source": f"k8s.io/api {tag}", "structs": structs, "fields": typed}
    OUT.write_text(json.dumps(data, separators=(",", ":")) + "\n")
    print(f"{OUT}: {len(structs)} of {len(schema)} types matched")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3])
