"""The import layering of docs/architecture.md (who may import whom), checked with ``ast``.

| layer | may import |
|---|---|
| api | the standard library only |
| converters, transforms, connectors | api (+ their own third-party libs), never pyspark |
| kafka | api and runtime.config_provider (client settings resolve ${...} variables) |
| runtime | anything but pyspark and sparkcat.engine (its seam is sparkcat.runtime.engine_api) |
| engine | anything but sparkcat.runtime.rest and sparkcat.connectors |
| embedded | anything but pyspark (it reaches Spark through sparkcat.engine) and the cli modules |
| assembly | everything (the composition roots); imported only by cli*, embedded, mirror_maker |
| mirror_maker | everything but the cli modules; imported only by cli |
| cli, cli_* | everything; imported by no other layer (cli dispatches to its siblings) |
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src" / "sparkcat"
PLUGIN_LAYERS = ("converters", "transforms", "connectors")
LOWER_LAYERS = ("api", *PLUGIN_LAYERS, "runtime", "engine", "kafka")
ASSEMBLY_USERS = ("assembly", "embedded", "mirror_maker")  # and the cli modules


def _module_name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> list[str]:
    """Absolute names of every module ``path`` imports (relative imports resolved)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = _module_name(path)
    if path.name != "__init__.py":
        package = package.rpartition(".")[0]
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            names.append(module)
            # "from sparkcat import engine" imports a sub-module by name.
            names.extend(
                f"{module}.{alias.name}"
                for alias in node.names
                if module == "sparkcat" and not alias.name.startswith("__")
            )
    return names


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _under(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def _is_cli(layer: str) -> bool:
    return layer == "cli" or layer.startswith("cli_")


def _violations(module: str, imported: str) -> str | None:
    layer = _layer(module)
    top = imported.split(".")[0]
    if top == "sparkcat" and _is_cli(_layer(imported)) and not _is_cli(layer):
        return "nothing but the command lines imports sparkcat.cli*"
    if _under(imported, "sparkcat.assembly") and not (_is_cli(layer) or layer in ASSEMBLY_USERS):
        return "only the command lines, the embedded API and MirrorMaker build an assembly"
    if _under(imported, "sparkcat.mirror_maker") and layer not in ("mirror_maker", "cli"):
        return "only the command line runs MirrorMaker's dedicated mode"
    if top == "pyspark" and layer != "engine":
        return "only sparkcat.engine imports pyspark"
    if layer == "api":
        if top == "sparkcat":
            return (
                None
                if imported == "sparkcat" or _under(imported, "sparkcat.api")
                else ("api imports nothing else of sparkcat")
            )
        if top not in sys.stdlib_module_names and top != "__future__":
            return "api imports only the standard library"
    if layer in PLUGIN_LAYERS and top == "sparkcat":
        own = f"sparkcat.{layer}"
        allowed = (
            imported == "sparkcat" or _under(imported, "sparkcat.api") or _under(imported, own)
        )
        return None if allowed else f"{layer} imports only sparkcat.api"
    if layer == "kafka" and top == "sparkcat":
        # The one exception: client settings resolve ${provider:path:key} variables where the
        # clients are built, and the providers come from the worker's plugin registry.
        allowed = imported == "sparkcat" or any(
            _under(imported, f"sparkcat.{own}")
            for own in ("api", "kafka", "runtime.config_provider")
        )
        return None if allowed else "kafka (the client layer) imports only sparkcat.api"
    if layer == "runtime" and _under(imported, "sparkcat.engine"):
        return "runtime reaches the engine only through sparkcat.runtime.engine_api"
    if layer == "engine" and _under(imported, "sparkcat.runtime.rest"):
        return "engine does not import the REST layer"
    if layer == "engine" and _under(imported, "sparkcat.connectors"):
        # The engine runs any connector through the plugin API; what it needs of the
        # Spark-native connectors lives beside their data plane (engine/native_*).
        return "engine imports no specific connector"
    if layer in LOWER_LAYERS and _under(imported, "sparkcat.embedded"):
        return "nothing below the embedded API imports it"
    return None


def _source_files() -> list[Path]:
    return sorted(SRC.rglob("*.py"))


def test_the_source_tree_is_found() -> None:
    assert (SRC / "api" / "__init__.py").is_file()


@pytest.mark.parametrize("path", _source_files(), ids=lambda p: str(p.relative_to(SRC)))
def test_imports_respect_the_layers(path: Path) -> None:
    module = _module_name(path)
    problems = [
        f"{module} imports {name}: {why}"
        for name in _imports(path)
        if (why := _violations(module, name)) is not None
    ]
    assert problems == []


@pytest.mark.parametrize(
    ("module", "imported", "allowed"),
    [
        ("sparkcat.api.records", "collections.abc", True),
        ("sparkcat.embedded.worker", "sparkcat.cli_distributed", False),
        ("sparkcat.runtime.herder.base", "sparkcat.cli_manage", False),
        ("sparkcat.assembly.process", "sparkcat.cli", False),
        ("sparkcat.mirror_maker", "sparkcat.cli", False),
        ("sparkcat.cli", "sparkcat.cli_distributed", True),
        ("sparkcat.cli", "sparkcat.mirror_maker", True),
        ("sparkcat.embedded.connect", "sparkcat.mirror_maker", False),
        ("sparkcat.cli_distributed", "sparkcat.assembly.connect_distributed", True),
        ("sparkcat.embedded.connect", "sparkcat.assembly.connect_distributed", True),
        ("sparkcat.mirror_maker", "sparkcat.assembly.process", True),
        ("sparkcat.assembly.connect_standalone", "sparkcat.engine", True),
        ("sparkcat.runtime.worker", "sparkcat.assembly.process", False),
        ("sparkcat.runtime.herder.base", "sparkcat.assembly.connect_standalone", False),
        ("sparkcat.engine.spark_engine", "sparkcat.assembly", False),
        ("sparkcat.kafka.broker", "sparkcat.assembly.process", False),
        ("sparkcat.runtime.worker", "sparkcat.engine.spark_engine", False),
        ("sparkcat.runtime.worker", "sparkcat.runtime.engine_api", True),
        ("sparkcat.kafka.clients", "sparkcat.runtime.worker_config", False),
        ("sparkcat.kafka.clients", "sparkcat.runtime.config_provider", True),
        ("sparkcat.kafka.admin", "sparkcat.kafka.properties", True),
        ("sparkcat.api.records", "orjson", False),
        ("sparkcat.api.records", "sparkcat.runtime.tasks.pipeline", False),
        ("sparkcat.converters.json.converter", "orjson", True),
        ("sparkcat.converters.json.converter", "sparkcat.api.data", True),
        ("sparkcat.converters.json.converter", "sparkcat.runtime", False),
        ("sparkcat.connectors.file.source_task", "pyspark.sql", False),
        ("sparkcat.runtime.standalone.herder", "sparkcat.engine.spark", False),
        ("sparkcat.runtime.standalone.herder", "sparkcat.runtime.engine_api", True),
        ("sparkcat.engine.source", "pyspark.sql.datasource", True),
        ("sparkcat.engine.source", "sparkcat.runtime.rest.app", False),
        ("sparkcat.engine.native_sink", "sparkcat.connectors.spark.config", False),
        ("sparkcat.engine.native_schema", "sparkcat.connectors.storage.formats", False),
        ("sparkcat.engine.native_sink", "sparkcat.engine.native_config", True),
        ("sparkcat.runtime.rest.app", "sparkcat.cli", False),
        ("sparkcat.connectors.file.config", "sparkcat", True),
        ("sparkcat.embedded.connect", "sparkcat.engine.streams", True),
        ("sparkcat.embedded.connect", "sparkcat.runtime.distributed.herder", True),
        ("sparkcat.embedded.connect", "pyspark.sql", False),
        ("sparkcat.engine.streams", "sparkcat.embedded.errors", False),
        ("sparkcat.runtime.distributed.herder", "sparkcat.embedded", False),
    ],
)
def test_the_rules_themselves(module: str, imported: str, allowed: bool) -> None:
    assert (_violations(module, imported) is None) is allowed


@pytest.mark.parametrize(
    "path", sorted((SRC / "runtime").rglob("*.py")), ids=lambda p: str(p.relative_to(SRC))
)
def test_no_module_reaches_into_a_herders_private_members(path: Path) -> None:
    """``herder._x`` outside the herder's own classes: the distributed work module and the
    rest use the herder's public interface (``self._herder`` is a module's own member)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    reached = [
        f"line {node.lineno}: herder.{node.attr}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and node.attr.startswith("_")
        and not node.attr.startswith("__")
        and isinstance(node.value, ast.Name)
        and node.value.id == "herder"
    ]
    assert reached == []
