"""A small Schema-Registry-API-compatible server for the test suite (never shipped).

No Confluent Schema Registry can be installed on the test machines, so the converters are
tested against this in-memory stand-in. It serves the part of the REST API that clients and
converters use, with the registry's documented status codes and error bodies
(``{"error_code": 40401, "message": ...}``):

- ``POST /subjects/{s}/versions`` registers (same schema -> same global id in every subject;
  a schema already in the subject returns its id without a new version; an incompatible
  schema -> 409; an unparsable one -> 422 / 42201).
- ``POST /subjects/{s}`` looks a schema up (40401 subject / 40403 schema not found).
- ``GET /subjects``, ``GET /subjects/{s}/versions``, ``GET /subjects/{s}/versions/{v|latest}``,
  ``DELETE /subjects/{s}``, ``GET /schemas/ids/{id}``, ``GET /schemas/types``.
- ``GET``/``PUT /config`` and ``/config/{s}`` (compatibility levels), and
  ``POST /compatibility/subjects/{s}/versions/{v|latest}``.

Compatibility for AVRO follows Avro's schema resolution (see ``avro_can_read``); other schema
types are always compatible here. PROTOBUF schemas are accepted in the registry's serialized
form only (the base64 of a ``FileDescriptorProto``; ``.proto`` text would need a parser) and
validated by building them, with their ``references`` and the well-known files every Confluent
client ships (``google/protobuf/*``, ``google/type/*``, ``confluent/*``), in a descriptor pool;
they are returned as stored whatever ``format`` is asked for. BACKWARD/FORWARD/FULL check
against the latest version, their ``_TRANSITIVE`` variants against all versions.
"""

from __future__ import annotations

import base64
import json
import re
import socket
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote, urlsplit

import fastavro
from google.protobuf import descriptor_pb2, descriptor_pool

LEVELS = (
    "NONE",
    "BACKWARD",
    "BACKWARD_TRANSITIVE",
    "FORWARD",
    "FORWARD_TRANSITIVE",
    "FULL",
    "FULL_TRANSITIVE",
)
_PROMOTIONS = {
    "int": {"int", "long", "float", "double"},
    "long": {"long", "float", "double"},
    "float": {"float", "double"},
    "double": {"double"},
    "string": {"string", "bytes"},
    "bytes": {"bytes", "string"},
}


class RegistryError(Exception):
    def __init__(self, status: int, code: int, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


# -- Avro compatibility ---------------------------------------------------------------------
class _Names:
    """Named types of one schema, by full and short name."""

    def __init__(self, schema: Any) -> None:
        self.types: dict[str, dict[str, Any]] = {}
        self._collect(schema, None)

    def _collect(self, node: Any, namespace: str | None) -> None:
        if isinstance(node, list):
            for member in node:
                self._collect(member, namespace)
        elif isinstance(node, dict):
            kind = node.get("type")
            if kind in ("record", "error", "enum", "fixed"):
                name = node["name"]
                ns = node.get("namespace", namespace)
                if "." in name:
                    ns = name.rpartition(".")[0]
                full = name if "." in name or not ns else f"{ns}.{name}"
                self.types[full] = node
                self.types.setdefault(full.rpartition(".")[2], node)
                for f in node.get("fields", ()):
                    self._collect(f["type"], ns)
            elif kind == "array":
                self._collect(node["items"], namespace)
            elif kind == "map":
                self._collect(node["values"], namespace)
            elif isinstance(kind, dict | list):
                self._collect(kind, namespace)

    def resolve(self, node: Any) -> Any:
        if isinstance(node, str):
            if node in self.types:
                return self.types[node]
            return {"type": node}
        if isinstance(node, dict) and isinstance(node.get("type"), dict | list):
            return self.resolve(node["type"])
        return node


def avro_can_read(reader: Any, writer: Any) -> list[str]:
    """Why data written with ``writer`` cannot be read with ``reader`` (empty: it can)."""
    return _can_read(reader, writer, _Names(reader), _Names(writer), "/", set())


def _short(name: str) -> str:
    return name.rpartition(".")[2]


def _can_read(
    reader: Any, writer: Any, rn: _Names, wn: _Names, path: str, seen: set[tuple[int, int]]
) -> list[str]:
    r, w = rn.resolve(reader), wn.resolve(writer)
    if isinstance(w, list):
        return [p for member in w for p in _can_read(r, member, rn, wn, path, seen)]
    if isinstance(r, list):
        for member in r:
            if not _can_read(member, w, rn, wn, path, seen):
                return []
        return [f"{path}: reader union lacks writer type {_type_name(w)}"]
    key = (id(r), id(w))
    if key in seen:
        return []
    seen.add(key)
    rt, wt = r["type"], w["type"]
    if wt in _PROMOTIONS or wt in ("boolean", "null"):
        if rt == wt or rt in _PROMOTIONS.get(wt, ()):
            return []
        return [f"{path}: type mismatch: reader {rt}, writer {wt}"]
    if rt != wt and not (rt in ("record", "error") and wt in ("record", "error")):
        return [f"{path}: type mismatch: reader {rt}, writer {wt}"]
    if rt == "array":
        return _can_read(r["items"], w["items"], rn, wn, path + "items/", seen)
    if rt == "map":
        return _can_read(r["values"], w["values"], rn, wn, path + "values/", seen)
    if _short(r["name"]) != _short(w["name"]):
        return [f"{path}: name mismatch: reader {r['name']}, writer {w['name']}"]
    if rt == "fixed":
        return [] if r["size"] == w["size"] else [f"{path}: fixed size mismatch"]
    if rt == "enum":
        missing = set(w["symbols"]) - set(r["symbols"])
        if missing and "default" not in r:
            return [f"{path}: reader enum lacks symbols {sorted(missing)}"]
        return []
    problems: list[str] = []
    written = {f["name"]: f for f in w["fields"]}
    for f in r["fields"]:
        wf = written.get(f["name"])
        if wf is None:
            for alias in f.get("aliases", ()):
                wf = written.get(alias)
        if wf is None:
            if "default" not in f:
                problems.append(
                    f"{path}fields/{f['name']}: reader field has no default and is missing "
                    "in the writer"
                )
            continue
        problems += _can_read(f["type"], wf["type"], rn, wn, f"{path}fields/{f['name']}/", seen)
    return problems


def _type_name(node: Any) -> str:
    return str(node.get("name", node.get("type"))) if isinstance(node, dict) else str(node)


# -- the registry ---------------------------------------------------------------------------
def _well_known_protobuf_files() -> list[bytes]:
    """Serialized descriptors of the files Confluent's clients know without references (taken
    from protobuf, googleapis-common-protos and confluent-kafka, not from sparkcat)."""
    from confluent_kafka.schema_registry.confluent import meta_pb2
    from confluent_kafka.schema_registry.confluent.type import decimal_pb2
    from google.protobuf import (
        any_pb2,
        duration_pb2,
        empty_pb2,
        struct_pb2,
        timestamp_pb2,
        wrappers_pb2,
    )
    from google.type import date_pb2, timeofday_pb2

    modules = (descriptor_pb2, any_pb2, duration_pb2, empty_pb2, struct_pb2, timestamp_pb2)
    modules += (wrappers_pb2, date_pb2, timeofday_pb2, meta_pb2, decimal_pb2)
    return [m.DESCRIPTOR.serialized_pb for m in modules]


@dataclass
class _Stored:
    id: int
    schema_type: str
    text: str
    parsed: Any
    references: list[Any] = field(default_factory=list)


@dataclass
class _Subject:
    versions: list[int] = field(default_factory=list)  # schema id per version (1-based)
    compatibility: str | None = None


class Registry:
    """The registry's state and rules, independent of HTTP."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.schemas: dict[int, _Stored] = {}
        self.ids: dict[tuple[str, str], int] = {}
        self.subjects: dict[str, _Subject] = {}
        self.compatibility = "BACKWARD"
        self.basic_auth: str | None = None  # "user:password" the server then requires

    def _parse(self, body: Any) -> tuple[str, str, Any]:
        if not isinstance(body, dict) or not isinstance(body.get("schema"), str):
            raise RegistryError(422, 422, "Unrecognized field: schema is required")
        schema_type = body.get("schemaType") or "AVRO"
        text = body["schema"]
        if schema_type == "AVRO":
            try:
                parsed = json.loads(text)
                fastavro.parse_schema(parsed, _write_hint=False, _force=True)
            except Exception as e:
                raise RegistryError(
                    422, 42201, f"Either the input schema or one of its references is invalid: {e}"
                ) from e
            canonical = json.dumps(parsed, separators=(",", ":"), ensure_ascii=False)
        elif schema_type == "PROTOBUF":
            parsed = self._protobuf(text, body.get("references") or [])
            canonical = text
        elif schema_type == "JSON":
            parsed = json.loads(text)
            canonical = text
        else:
            raise RegistryError(422, 42201, f"Invalid schema type {schema_type}")
        return schema_type, canonical, parsed

    def _protobuf(self, text: str, references: list[Any]) -> descriptor_pb2.FileDescriptorProto:
        """The FileDescriptorProto of a serialized protobuf schema, checked by building it."""
        try:
            file = descriptor_pb2.FileDescriptorProto()
            file.ParseFromString(base64.b64decode(text, validate=True))
            pool = descriptor_pool.DescriptorPool()
            for known in _well_known_protobuf_files():
                pool.AddSerializedFile(known)
            for reference in references:
                _, schema_id = self.version_id(reference["subject"], str(reference["version"]))
                pool.Add(self.schemas[schema_id].parsed)
            pool.Add(file)
        except RegistryError:
            raise
        except Exception as e:
            raise RegistryError(
                422, 42201, f"Either the input schema or one of its references is invalid: {e}"
            ) from e
        return file

    def subject(self, name: str) -> _Subject:
        found = self.subjects.get(name)
        if found is None or not found.versions:
            raise RegistryError(404, 40401, f"Subject '{name}' not found.")
        return found

    def level(self, name: str) -> str:
        subject = self.subjects.get(name)
        if subject is not None and subject.compatibility is not None:
            return subject.compatibility
        return self.compatibility

    def version_id(self, name: str, version: str) -> tuple[int, int]:
        subject = self.subject(name)
        if version in ("latest", "-1"):
            return len(subject.versions), subject.versions[-1]
        if not re.fullmatch(r"-?\d+", version) or int(version) <= 0:
            raise RegistryError(
                422,
                42202,
                "The specified version '" + version + "' is not a valid version id. Allowed "
                'values are between [1, 2^31-1] and the string "latest"',
            )
        number = int(version)
        if number > len(subject.versions):
            raise RegistryError(404, 40402, f"Version {number} not found.")
        return number, subject.versions[number - 1]

    def incompatibilities(
        self, name: str, schema_type: str, parsed: Any, level: str, against: list[int]
    ) -> list[str]:
        if level == "NONE" or schema_type != "AVRO" or not against:
            return []
        targets = against if level.endswith("_TRANSITIVE") else against[-1:]
        problems: list[str] = []
        for schema_id in targets:
            old = self.schemas[schema_id].parsed
            if level.startswith(("BACKWARD", "FULL")):
                problems += [f"BACKWARD: {p}" for p in avro_can_read(parsed, old)]
            if level.startswith(("FORWARD", "FULL")):
                problems += [f"FORWARD: {p}" for p in avro_can_read(old, parsed)]
        return problems

    def register(self, name: str, body: Any) -> dict[str, Any]:
        schema_type, canonical, parsed = self._parse(body)
        with self.lock:
            subject = self.subjects.setdefault(name, _Subject())
            existing = self.ids.get((schema_type, canonical))
            if existing is not None and existing in subject.versions:
                return {"id": existing}
            problems = self.incompatibilities(
                name, schema_type, parsed, self.level(name), subject.versions
            )
            if problems:
                raise RegistryError(
                    409,
                    409,
                    "Schema being registered is incompatible with an earlier schema for subject "
                    f'"{name}", details: [{"; ".join(problems)}]',
                )
            if existing is None:
                existing = len(self.schemas) + 1
                references = list(body.get("references") or [])
                self.schemas[existing] = _Stored(
                    existing, schema_type, canonical, parsed, references
                )
                self.ids[(schema_type, canonical)] = existing
            subject.versions.append(existing)
            return {"id": existing}

    def lookup(self, name: str, body: Any) -> dict[str, Any]:
        schema_type, canonical, _ = self._parse(body)
        with self.lock:
            subject = self.subject(name)
            schema_id = self.ids.get((schema_type, canonical))
            if schema_id is None or schema_id not in subject.versions:
                raise RegistryError(404, 40403, "Schema not found")
            return self.version_body(name, subject.versions.index(schema_id) + 1, schema_id)

    def version_body(self, name: str, version: int, schema_id: int) -> dict[str, Any]:
        stored = self.schemas[schema_id]
        result: dict[str, Any] = {
            "subject": name,
            "version": version,
            "id": schema_id,
            "schema": stored.text,
        }
        if stored.schema_type != "AVRO":
            result["schemaType"] = stored.schema_type
        if stored.references:
            result["references"] = stored.references
        return result

    def schema_by_id(self, schema_id: int) -> dict[str, Any]:
        stored = self.schemas.get(schema_id)
        if stored is None:
            raise RegistryError(404, 40403, f"Schema {schema_id} not found")
        result: dict[str, Any] = {"schema": stored.text}
        if stored.schema_type != "AVRO":
            result["schemaType"] = stored.schema_type
        if stored.references:
            result["references"] = stored.references
        return result

    def test_compatibility(self, name: str, version: str, body: Any) -> dict[str, Any]:
        schema_type, _, parsed = self._parse(body)
        with self.lock:
            subject = self.subjects.get(name)
            if subject is None or not subject.versions:
                return {"is_compatible": True}
            level = self.level(name)
            if version in ("latest", "-1"):
                against = (
                    subject.versions if level.endswith("_TRANSITIVE") else (subject.versions[-1:])
                )
            else:
                against = [self.version_id(name, version)[1]]
            problems = self.incompatibilities(name, schema_type, parsed, level, against)
            result: dict[str, Any] = {"is_compatible": not problems}
            if problems:
                result["messages"] = problems
            return result

    def set_compatibility(self, name: str | None, body: Any) -> dict[str, Any]:
        level = body.get("compatibility") if isinstance(body, dict) else None
        if level not in LEVELS:
            raise RegistryError(
                422,
                42203,
                "Invalid compatibility level. Valid values are none, "
                "backward, forward, full, backward_transitive, "
                "forward_transitive, and full_transitive",
            )
        with self.lock:
            if name is None:
                self.compatibility = level
            else:
                self.subjects.setdefault(name, _Subject()).compatibility = level
        return {"compatibility": level}

    def get_compatibility(self, name: str | None, default_to_global: bool) -> dict[str, Any]:
        if name is None:
            return {"compatibilityLevel": self.compatibility}
        subject = self.subjects.get(name)
        if subject is not None and subject.compatibility is not None:
            return {"compatibilityLevel": subject.compatibility}
        if default_to_global:
            return {"compatibilityLevel": self.compatibility}
        raise RegistryError(
            404, 40408, f"Subject '{name}' does not have subject-level compatibility configured"
        )

    def delete_subject(self, name: str) -> list[int]:
        with self.lock:
            subject = self.subject(name)
            versions = list(range(1, len(subject.versions) + 1))
            del self.subjects[name]
            return versions


class _Handler(BaseHTTPRequestHandler):
    registry: Registry
    protocol_version = "HTTP/1.1"

    def setup(self) -> None:
        super().setup()
        # headers and body go out in two writes: without this, delayed ACKs cost ~40 ms each
        self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format: str, *args: Any) -> None:
        pass  # quiet: tests read the registry's state, not its access log

    def _send(self, status: int, body: Any) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/vnd.schemaregistry.v1+json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _body(self) -> Any:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if not raw:
            return None
        try:
            return json.loads(raw)
        except ValueError as e:
            raise RegistryError(400, 400, f"Unexpected character: {e}") from e

    def _dispatch(self, method: str) -> None:
        expected = self.registry.basic_auth
        if expected is not None:
            token = base64.b64encode(expected.encode()).decode()
            if self.headers.get("Authorization") != f"Basic {token}":
                self._send(401, {"error_code": 401, "message": "Unauthorized"})
                return
        split = urlsplit(self.path)
        parts = [unquote(p) for p in split.path.strip("/").split("/") if p]
        query = split.query
        try:
            body = self._body() if method in ("POST", "PUT") else None
            result = self._route(method, parts, body, query)
        except RegistryError as e:
            self._send(e.status, {"error_code": e.code, "message": e.message})
            return
        except Exception as e:  # the registry's answer to its own bugs
            self._send(500, {"error_code": 50001, "message": f"Error in the backend: {e!r}"})
            return
        self._send(200, result)

    def _route(self, method: str, parts: list[str], body: Any, query: str) -> Any:
        reg = self.registry
        match method, parts:
            case "GET", ["subjects"]:
                return sorted(s for s, v in reg.subjects.items() if v.versions)
            case "GET", ["schemas", "types"]:
                return ["JSON", "PROTOBUF", "AVRO"]
            case "GET", ["schemas", "ids", schema_id] if schema_id.isdigit():
                return reg.schema_by_id(int(schema_id))
            case "POST", ["subjects", name, "versions"]:
                return reg.register(name, body)
            case "POST", ["subjects", name]:
                return reg.lookup(name, body)
            case "GET", ["subjects", name, "versions"]:
                return list(range(1, len(reg.subject(name).versions) + 1))
            case "GET", ["subjects", name, "versions", version]:
                number, schema_id = reg.version_id(name, version)
                return reg.version_body(name, number, schema_id)
            case "DELETE", ["subjects", name]:
                return reg.delete_subject(name)
            case "GET", ["config"]:
                return reg.get_compatibility(None, True)
            case "GET", ["config", name]:
                return reg.get_compatibility(name, "defaultToGlobal=true" in query)
            case "PUT", ["config"]:
                return reg.set_compatibility(None, body)
            case "PUT", ["config", name]:
                return reg.set_compatibility(name, body)
            case "POST", ["compatibility", "subjects", name, "versions", version]:
                return reg.test_compatibility(name, version, body)
        raise RegistryError(404, 404, "HTTP 404 Not Found")

    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def do_PUT(self) -> None:
        self._dispatch("PUT")

    def do_DELETE(self) -> None:
        self._dispatch("DELETE")


class SchemaRegistryServer:
    """The registry served on a free loopback port in a background thread; with
    ``basic_auth="user:password"`` every request must carry those Basic credentials (401)."""

    def __init__(self, basic_auth: str | None = None) -> None:
        self.registry = Registry()
        self.registry.basic_auth = basic_auth
        handler = type("Handler", (_Handler,), {"registry": self.registry})
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="schema-registry", daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> SchemaRegistryServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)
