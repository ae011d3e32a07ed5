"""Avro schema resolution: can data written with one schema be read with another?

Used by ``latest.compatibility.strict``: like Confluent's serializer, the converter checks
locally that the subject's latest schema (the reader) can read data of the record's schema
(the writer) before writing with it. Rules of the Avro specification: primitive promotions
(int -> long/float/double, long -> float/double, float -> double, string <-> bytes), records
matched by name with reader fields found in the writer (or having a default), enums whose
reader has every writer symbol (or a default), fixed sizes, arrays/maps by their items, and
unions branch by branch.
"""

from __future__ import annotations

from typing import Any

_PROMOTIONS = {
    "int": ("int", "long", "float", "double"),
    "long": ("long", "float", "double"),
    "float": ("float", "double"),
    "double": ("double",),
    "string": ("string", "bytes"),
    "bytes": ("bytes", "string"),
    "boolean": ("boolean",),
    "null": ("null",),
}


class _Named:
    def __init__(self, schema: Any) -> None:
        self.types: dict[str, Any] = {}
        self._collect(schema, None)

    def _collect(self, node: Any, namespace: str | None) -> None:
        if isinstance(node, list):
            for member in node:
                self._collect(member, namespace)
            return
        if not isinstance(node, dict):
            return
        kind = node.get("type")
        if kind in ("record", "error", "enum", "fixed"):
            name = str(node["name"])
            space = name.rpartition(".")[0] if "." in name else node.get("namespace", namespace)
            full = name if "." in name or not space else f"{space}.{name}"
            self.types[full] = node
            self.types.setdefault(full.rpartition(".")[2], node)
            for field in node.get("fields", ()):
                self._collect(field["type"], space)
        elif kind == "array":
            self._collect(node["items"], namespace)
        elif kind == "map":
            self._collect(node["values"], namespace)
        elif isinstance(kind, dict | list):
            self._collect(kind, namespace)

    def resolve(self, node: Any) -> Any:
        if isinstance(node, str):
            return self.types.get(node, {"type": node})
        if isinstance(node, dict) and isinstance(node.get("type"), dict | list):
            return self.resolve(node["type"])
        return node


def incompatibilities(reader: Any, writer: Any) -> list[str]:
    """Why ``reader`` cannot read data written with ``writer`` (empty: it can)."""
    return _check(reader, writer, _Named(reader), _Named(writer), "/", set())


def _short(name: str) -> str:
    return name.rpartition(".")[2]


def _check(
    reader: Any, writer: Any, rn: _Named, wn: _Named, path: str, seen: set[tuple[int, int]]
) -> list[str]:
    r, w = rn.resolve(reader), wn.resolve(writer)
    if isinstance(w, list):
        return [p for member in w for p in _check(r, member, rn, wn, path, seen)]
    if isinstance(r, list):
        if any(not _check(member, w, rn, wn, path, seen) for member in r):
            return []
        return [f"{path}: the reader union has no branch for the writer's {w.get('type')}"]
    key = (id(r), id(w))
    if key in seen:  # recursive types: assume the pair holds while checking it
        return []
    seen.add(key)
    rt, wt = r["type"], w["type"]
    if wt in _PROMOTIONS:
        if rt in _PROMOTIONS[wt]:
            return []
        return [f"{path}: reader type {rt} cannot read writer type {wt}"]
    same_kind = rt == wt or {rt, wt} <= {"record", "error"}
    if not same_kind:
        return [f"{path}: reader type {rt} cannot read writer type {wt}"]
    if rt == "array":
        return _check(r["items"], w["items"], rn, wn, path + "items/", seen)
    if rt == "map":
        return _check(r["values"], w["values"], rn, wn, path + "values/", seen)
    if _short(str(r["name"])) != _short(str(w["name"])):
        return [f"{path}: reader name {r['name']} differs from writer name {w['name']}"]
    if rt == "fixed":
        return [] if r["size"] == w["size"] else [f"{path}: fixed sizes differ"]
    if rt == "enum":
        missing = set(w["symbols"]) - set(r["symbols"])
        if missing and "default" not in r:
            return [f"{path}: the reader enum lacks symbols {sorted(missing)}"]
        return []
    problems: list[str] = []
    written = {f["name"]: f for f in w["fields"]}
    for field in r["fields"]:
        match = written.get(field["name"])
        for alias in field.get("aliases", ()):
            match = match or written.get(alias)
        if match is None:
            if "default" not in field:
                problems.append(
                    f"{path}{field['name']}: reader field missing from the writer, without default"
                )
            continue
        problems += _check(field["type"], match["type"], rn, wn, f"{path}{field['name']}/", seen)
    return problems
