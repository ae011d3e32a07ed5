"""Code to executors, and each connector's own plugin environment on them.

Driver side (:class:`Shipment`): with a cluster master (anything but ``local``/``local[..]``)
executors may be on hosts that have none of the driver's files, so the worker ships, by
Spark's own means:

- sparkcat itself as a zip with ``SparkContext.addPyFile`` (Spark puts it on the Python
  workers' ``sys.path`` ahead of site-packages: executors run the driver's exact sparkcat);
- every ``plugin.path`` entry as its own content-addressed zip with ``SparkContext.addFile``
  (``plugin-<dir name>-<hash>.zip``). Each entry is one plugin's *environment*: its modules
  and the pure-Python libraries it bundles.

Third-party libraries sparkcat needs (confluent-kafka, orjson, ...) and anything compiled come
from the executors' Python environment: pre-installed, or a packed one via ``spark.archives``
(see docs/cluster.md for the interpreter rule).

Executor side (:func:`activate`, called by the data source's ``read`` before a lease runs):
the zips are unpacked once per executor, and the lease's ``plugin.path`` is rewritten to the
local copies with the connector's own plugin first. Before a lease of another connector runs
in a reused Python worker, modules loaded from plugin environments are dropped from
``sys.modules``, so two connectors whose plugins bundle different versions of one library
each import their own copy (Kafka Connect gets this from a class loader per plugin). The same
isolation applies with local masters, using the plugin directories in place.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib
import logging
import os
import shutil
import sys
import tempfile
import threading
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import sparkcat
from sparkcat.runtime.tasks.lease import LeaseSpec

log = logging.getLogger(__name__)

# Lease worker-config key: the shipped zip of each plugin.path entry, in the same order.
SHIPPED_KEY = "sparkcat.plugin.path.shipped"


def is_local_master(master: str) -> bool:
    """``local``, ``local[N]``, ``local[N,F]``: executors are this process's threads."""
    return master == "local" or master.startswith("local[")


def plugin_entries(worker_config: Mapping[str, str]) -> list[str]:
    raw = worker_config.get("plugin.path", "")
    return [p.strip() for p in raw.split(",") if p.strip()]


def _files_of(root: Path) -> list[Path]:
    return sorted(
        p
        for p in root.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
    )


def zip_tree(root: Path, staging: Path, stem: str, arc_prefix: str = "") -> Path:
    """A zip of ``root``'s files named ``<stem>-<content hash>.zip`` in ``staging``."""
    files = _files_of(root)
    digest = hashlib.sha256()
    for path in files:
        digest.update(str(path.relative_to(root)).encode())
        digest.update(path.read_bytes())
    target = staging / f"{stem}-{digest.hexdigest()[:12]}.zip"
    if not target.exists():
        with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
            for path in files:
                archive.write(path, arc_prefix + str(path.relative_to(root)))
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
            root = Path(entry)
            if not root.is_dir():  # the plugin registry skips it too
                log.warning("plugin.path entry %s is not a directory; not shipped", entry)
                continue
            self.plugin_zips.append(zip_tree(root, self._staging, f"plugin-{root.name}"))

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
        log.info(
            "Shipping sparkcat and %d plugin environment(s) to executors", len(self.plugin_zips)
        )

    def close(self) -> None:
        if self._staging is not None:
            shutil.rmtree(self._staging, ignore_errors=True)


# -- executor side ---------------------------------------------------------------------------

_lock = threading.Lock()
_known_roots: set[str] = set()  # every plugin root any lease of this process used
_active: tuple[str, ...] | None = None  # the roots of the last lease, in sys.path order


def _unpacked(zip_name: str) -> str:
    """The directory a shipped zip is unpacked to on this executor (once per executor)."""
    from pyspark import SparkFiles

    archive = SparkFiles.get(zip_name)
    # Absolute: modules' __file__ are, and activate() matches them against these roots.
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


def _own_first(roots: list[str], task_class: str) -> list[str]:
    """``roots`` with the one that holds ``task_class``'s top-level module first."""
    top = task_class.split(":")[0].split(".")[0]
    for index, root in enumerate(roots):
        if os.path.exists(os.path.join(root, top + ".py")) or os.path.isdir(
            os.path.join(root, top)
        ):
            return [root, *roots[:index], *roots[index + 1 :]]
    return roots


def _under(path: str | None, roots: set[str]) -> bool:
    return path is not None and any(path.startswith(root + os.sep) for root in roots)


def activate(spec: LeaseSpec) -> LeaseSpec:
    """Prepare this Python worker for ``spec``'s lease; returns the spec to run."""
    global _active
    shipped = spec.worker_config.get(SHIPPED_KEY)
    if shipped is not None:
        roots = [_unpacked(name) for name in shipped.split(",") if name]
    else:
        roots = [os.path.abspath(p) for p in plugin_entries(spec.worker_config)]
    if not roots:
        return spec
    roots = _own_first(roots, spec.task_config.get("task.class", ""))
    with _lock:
        if _active != tuple(roots):
            _known_roots.update(roots)
            stale = [
                name
                for name, module in list(sys.modules.items())
                if _under(getattr(module, "__file__", None), _known_roots)
            ]
            for name in stale:
                del sys.modules[name]
            sys.path[:] = [p for p in sys.path if p not in _known_roots]
            sys.path[0:0] = roots
            importlib.invalidate_caches()
            _active = tuple(roots)
    config = dict(spec.worker_config)
    config["plugin.path"] = ",".join(roots)
    return dataclasses.replace(spec, worker_config=config)
