"""Shipping plugins: one zip per plugin, named by content, holding the plugin as laid out."""

from __future__ import annotations

import zipfile
from pathlib import Path

from tests.support.plugins import versioned_plugin

from sparkcat.engine import shipping
from sparkcat.engine.shipping import Shipment, activate, zip_tree
from sparkcat.runtime.tasks.lease import LeaseSpec


def spec(task_class: str, plugin_path: str) -> LeaseSpec:
    return LeaseSpec("c", 0, 1, "source", {"task.class": task_class}, {},
                     {"plugin.path": plugin_path}, 1000, 10, None)  # fmt: skip


def test_zips_are_named_by_content_and_skip_bytecode(tmp_path: Path) -> None:
    root = versioned_plugin(tmp_path, "a", 1)
    (root / "__pycache__").mkdir()
    (root / "__pycache__" / "x.pyc").write_bytes(b"\0")
    staging = tmp_path / "staging"
    staging.mkdir()

    first = zip_tree(root, staging, "plugin-a")
    (root / "somelib" / "__init__.py").write_text("VERSION = 3\n")
    second = zip_tree(root, staging, "plugin-a")

    assert first != second and first.name.startswith("plugin-a-")
    assert sorted(zipfile.ZipFile(first).namelist()) == [
        "a.py", "somelib/__init__.py", "somelib/extra.py"
    ]  # fmt: skip


def test_local_masters_ship_nothing(tmp_path: Path) -> None:
    assert Shipment({"plugin.path": str(tmp_path)}, "local[4]").lease_config() == {}
    assert not Shipment({}, "local").enabled


def test_cluster_masters_ship_sparkcat_and_each_plugin_of_each_entry(tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    versioned_plugin(first, "acme-a", 1)
    versioned_plugin(first, "acme-b", 2)
    (first / "loose.py").write_text("X = 1\n")
    versioned_plugin(second, "acme-c", 3)
    shipment = Shipment({"plugin.path": f"{first}, {second}"}, "spark://h:7077")
    try:
        names = shipment.lease_config()[shipping.SHIPPED_KEY].split(",")
        assert [n.rsplit("-", 1)[0] for n in names] == [
            "plugin-acme-a", "plugin-acme-b", "plugin-loose", "plugin-acme-c"
        ]  # fmt: skip
        contents = [sorted(zipfile.ZipFile(z).namelist()) for z in shipment.plugin_zips]
        assert contents[1] == ["acme-b/acme_b.py", "acme-b/somelib/__init__.py",
                               "acme-b/somelib/extra.py"]  # fmt: skip
        assert contents[2] == ["loose.py"]
        assert shipment.sparkcat_zip is not None
        with zipfile.ZipFile(shipment.sparkcat_zip) as archive:
            assert "sparkcat/runtime/tasks/lease.py" in archive.namelist()
    finally:
        shipment.close()


def test_a_missing_plugin_directory_is_skipped_like_the_registry_does(tmp_path: Path) -> None:
    versioned_plugin(tmp_path / "entry", "a", 1)
    shipment = Shipment(
        {"plugin.path": f"{tmp_path / 'nope'},{tmp_path / 'entry'}"}, "spark://h:7077"
    )
    try:
        assert [z.name.rsplit("-", 1)[0] for z in shipment.plugin_zips] == ["plugin-a"]
    finally:
        shipment.close()


def test_leases_of_local_masters_use_the_plugin_path_in_place(tmp_path: Path) -> None:
    original = spec("conn_a:Task", str(tmp_path))

    assert activate(original) is original
