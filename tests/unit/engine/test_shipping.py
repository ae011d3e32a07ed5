"""Plugin environments: zips named by content, and per-lease isolation in one process."""

from __future__ import annotations

import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from sparkcat.engine import shipping
from sparkcat.engine.shipping import Shipment, activate, zip_tree
from sparkcat.runtime.tasks.lease import LeaseSpec


def plugin(parent: Path, name: str, version: int) -> Path:
    root = parent / name
    (root / "vlib").mkdir(parents=True)
    (root / "vlib" / "__init__.py").write_text(f"__version__ = {version}\n")
    (root / f"conn_{name}.py").write_text("import vlib\nSEEN = vlib.__version__\n")
    return root


def spec(task_class: str, plugin_path: str) -> LeaseSpec:
    return LeaseSpec("c", 0, 1, "source", {"task.class": task_class}, {},
                     {"plugin.path": plugin_path}, 1000, 10, None)  # fmt: skip


@pytest.fixture
def clean_imports() -> Iterator[None]:
    path, modules = list(sys.path), set(sys.modules)
    yield
    sys.path[:] = path
    for name in set(sys.modules) - modules:
        del sys.modules[name]
    shipping._known_roots.clear()
    shipping._active = None


def test_zips_are_named_by_content_and_skip_bytecode(tmp_path: Path) -> None:
    root = plugin(tmp_path, "a", 1)
    (root / "__pycache__").mkdir()
    (root / "__pycache__" / "x.pyc").write_bytes(b"\0")
    staging = tmp_path / "staging"
    staging.mkdir()

    first = zip_tree(root, staging, "plugin-a")
    (root / "vlib" / "__init__.py").write_text("__version__ = 3\n")
    second = zip_tree(root, staging, "plugin-a")

    assert first != second and first.name.startswith("plugin-a-")
    assert sorted(zipfile.ZipFile(first).namelist()) == ["conn_a.py", "vlib/__init__.py"]


def test_local_masters_ship_nothing(tmp_path: Path) -> None:
    assert Shipment({"plugin.path": str(tmp_path)}, "local[4]").lease_config() == {}
    assert not Shipment({}, "local").enabled


def test_cluster_masters_ship_sparkcat_and_each_plugin(tmp_path: Path) -> None:
    a, b = plugin(tmp_path, "a", 1), plugin(tmp_path, "b", 2)
    shipment = Shipment({"plugin.path": f"{a}, {b}"}, "spark://h:7077")
    try:
        names = shipment.lease_config()[shipping.SHIPPED_KEY].split(",")
        assert [n.split("-")[1] for n in names] == ["a", "b"]
        assert shipment.sparkcat_zip is not None
        with zipfile.ZipFile(shipment.sparkcat_zip) as archive:
            assert "sparkcat/runtime/tasks/lease.py" in archive.namelist()
    finally:
        shipment.close()


def test_a_missing_plugin_directory_is_skipped_like_the_registry_does(tmp_path: Path) -> None:
    a = plugin(tmp_path, "a", 1)
    shipment = Shipment({"plugin.path": f"{tmp_path / 'nope'},{a}"}, "spark://h:7077")
    try:
        assert [z.name.split("-")[1] for z in shipment.plugin_zips] == ["a"]
    finally:
        shipment.close()


def test_each_lease_imports_its_own_plugins_copy_of_a_library(
    tmp_path: Path, clean_imports: None
) -> None:
    a, b = plugin(tmp_path, "a", 1), plugin(tmp_path, "b", 2)
    both = f"{a},{b}"
    seen = []
    for task_class in ("conn_a:Task", "conn_b.Task", "conn_a:Task", "conn_b:Task"):
        activated = activate(spec(task_class, both))
        module = task_class.split(":")[0].split(".")[0]
        seen.append(__import__(module).SEEN)
        assert activated.worker_config["plugin.path"].split(",")[0].endswith(module[-1])

    assert seen == [1, 2, 1, 2]


def test_leases_without_plugins_are_left_alone(clean_imports: None) -> None:
    original = spec("org.apache.kafka.connect.file.FileStreamSourceTask", "")

    assert activate(original) is original
