"""Code to executors, and each plugin's files on them.

Driver side (:class:`Shipment`): with a cluster master (anything but ``local``/``local[..]``)
executors may be on hosts that have none of the driver's files, so the worker ships, by
Spark's own means:

- sparkcat itself as a zip with ``SparkContext.addPyFile`` (Spark puts it on the Python
  workers' ``sys.path`` ahead of site-packages: executors run the driver's exact sparkcat);
- every plugin of every ``plugin.path`` entry (:mod:`sparkcat.runtime.isolation.layout`: a
  plugin subdirectory with the pure-Python libraries it bundles, or a ``*.py`` file or
  package directly in the entry) as its own content-addressed zip with
  ``SparkContext.addFile`` (``plugin-<name>-<hash>.zip``), holding the plugin as it sits in
  its entry (``acme-source/...``, ``x.py``).

Third-party libraries sparkcat needs (confluent-kafka, orjson, ...) and anything compiled come
from the executors' Python environment: pre-installed, or a packed one via ``spark.archives``
(see docs/cluster.md for the interpreter rule).

Executor side (:func:`activate`, called by the data source's ``read`` before a lease runs):
the zips are unpacked once per executor, each into a directory of its own, and the lease's
``plugin.path`` becomes those directories: the same plugins in the same layout and order. The
plugin registry then gives each plugin its own module table
(:mod:`sparkcat.runtime.isolation.loader`), so leases of connectors whose plugins bundle
different versions of one library run in one reused Python worker, one after the other or
at the same time, each with its own copy. Nothing is dropped from ``sys.modules`` and
``sys.path`` is left alone. With local masters the plugin directories are used in place.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import os
import shutil
import tempfile
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import sparkcat
from sparkcat.runtime.isolation.layout import plugin_locations
from sparkcat.runtime.tasks.lease import LeaseSpec

log = logging.getLogger(__name__)

# Lease worker-config key: the shipped zip of each plugin, in plugin.path order.
SHIPPED_KEY = "sparkcat.plugin.path.shipped"


def is_local_master(master: str) -> bool:
    """``local``, ``local[N]``, ``local[N,F]``: executors are this process's threads."""
    return master == "local" or master.startswith("local[")


def plugin_entries(worker_config: Mapping[str, str]) -> list[str]:
    raw = worker_config.get("plugin.path", "")
    return [p.strip() for p in raw.split(",") if p.strip()]


def _files_of(root: Path) -> list[Path]:
    if root.is_file():
        return [root]
    return sorted(
        p
        for p in root.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
    )


def zip_tree(root: Path, staging: Path, stem: str, arc_prefix: str = "") -> Path:
    """A zip of ``root``'s files (or of the file ``root``) named ``<stem>-<content hash>.zip``
    in ``staging``; each file's name in it is ``arc_prefix`` + its path under ``root``."""
    base = root.parent if root.is_file() else root
    files = [(path, arc_prefix + str(path.relative_to(base))) for path in _files_of(root)]
    digest = hashlib.sha256()
    for path, name in files:
        digest.update(name.encode())
        digest.update(path.read_bytes())
    target = staging / f"{stem}-{digest.hexdigest()[:12]}.zip"
    if not target.exists():
        with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
            for path, name in files:
                archive.write(path, name)
    return target


class Shipment:
    """What a worker ships to executors (see the module docs). Zips are built at once (they
    name the lease config); :meth:`attach` hands them to Spark once the session exists."""

    def __init__(self, worker_config: Mapping[str, str], master: str) -> None:
        self.enabled = not is_local_master(master)
        self._staging: Path | None = None
        self.sparkcat_zip: Path | None = None
        self.plugin_zips: list[Path] = []
        if not self.enabled:
            return
        self._staging = Path(tempfile.mkdtemp(prefix="sparkcat-ship-"))
        package = Path(sparkcat.__file__).parent
        self.sparkcat_zip = zip_tree(package, self._staging, "sparkcat", "sparkcat/")
        for entry in plugin_entries(worker_config):
            for plugin in plugin_locations(entry):  # none if not a directory, as the registry
                # The plugin as it sits in its entry: a subdirectory keeps its name, so the
                # executor's copy has the same layout (a subdirectory plugin, a loose module).
                prefix = plugin.path.name + "/" if plugin.path.is_dir() else ""
                stem = f"plugin-{plugin.path.name.removesuffix('.py')}"
                archive = zip_tree(plugin.path, self._staging, stem, prefix)
                if archive not in self.plugin_zips:
                    self.plugin_zips.append(archive)

    def lease_config(self) -> dict[str, str]:
        """Keys added to every lease's worker config."""
        if not self.enabled:
            return {}
        return {SHIPPED_KEY: ",".join(z.name for z in self.plugin_zips)}

    def attach(self, spark_context: Any) -> None:
        """Hand the zips to Spark (the driver serves them to executors)."""
        if not self.enabled:
            return
        assert self.sparkcat_zip is not None
        spark_context.addPyFile(str(self.sparkcat_zip))
        for path in self.plugin_zips:
            spark_context.addFile(str(path))
        log.info("Shipping sparkcat and %d plugin(s) to executors", len(self.plugin_zips))

    def close(self) -> None:
        if self._staging is not None:
            shutil.rmtree(self._staging, ignore_errors=True)


# -- executor side ---------------------------------------------------------------------------


def _unpacked(zip_name: str) -> str:
    """The directory a shipped zip is unpacked to on this executor (once per executor)."""
    from pyspark import SparkFiles

    archive = SparkFiles.get(zip_name)
    # Absolute: a plugin's module table is keyed by its root, the same in every lease.
    root = os.path.abspath(SparkFiles.getRootDirectory())
    target = os.path.join(root, "unpacked", zip_name[: -len(".zip")])
    if not os.path.isdir(target):
        os.makedirs(os.path.dirname(target), exist_ok=True)
        scratch = tempfile.mkdtemp(dir=os.path.dirname(target))
        with zipfile.ZipFile(archive) as opened:
            opened.extractall(scratch)
        try:
            os.rename(scratch, target)
        except OSError:  # another Python worker of this executor was first
            shutil.rmtree(scratch, ignore_errors=True)
    return target


def activate(spec: LeaseSpec) -> LeaseSpec:
    """``spec`` with its ``plugin.path`` on this executor (see the module docs)."""
    shipped = spec.worker_config.get(SHIPPED_KEY)
    if shipped is None:
        return spec  # a local master: the driver's plugin directories are this machine's
    config = dict(spec.worker_config)
    config["plugin.path"] = ",".join(_unpacked(name) for name in shipped.split(",") if name)
    return dataclasses.replace(spec, worker_config=config)
