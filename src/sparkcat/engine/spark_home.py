"""A Spark home for the driver JVM in which Spark's Python processes import installed pyspark.

Spark puts ``$SPARK_HOME/python/lib/pyspark.zip`` and py4j's zip in front of the ``PYTHONPATH``
of every Python process it starts: daemons, planners, one streaming source runner per query,
task workers. Python caches no bytecode for modules it imports from a zip, so each of those
processes compiled pyspark's sources again: ~0.55 s of CPU and ~8 MB more memory per process,
about 3 s of the quickstart's first record on two cores (bench/RESULTS.md, Start-up).

Where those processes run this interpreter (local masters), its installed pyspark is the very
code the zip holds, with bytecode cached by pip. The driver JVM is then started with
``SPARK_HOME`` naming a mirror of pip's pyspark directory (a symbolic link per entry) without
its ``python`` directory: Spark's zip entries name files that do not exist, which Python skips.
A ``SPARK_HOME`` the user set is left alone.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import tempfile
from pathlib import Path

import pyspark

log = logging.getLogger(__name__)

PYTHON_DIR = "python"
ZIP = Path(PYTHON_DIR, "lib", "pyspark.zip")


def pip_spark_home() -> Path:
    """The directory of the installed pyspark package: pip's Spark home (jars, bin, python)."""
    return Path(pyspark.__file__).resolve().parent


def _mirrors(mirror: Path, home: Path) -> bool:
    jars = mirror / "jars"
    return jars.is_symlink() and jars.resolve() == (home / "jars").resolve()


def mirror_without_zips(home: Path, parent: Path | None = None) -> Path | None:
    """A directory that links every entry of ``home`` but ``python``, created once per
    user, pyspark directory and version and shared by later workers; None when ``home`` has no
    zipped pyspark or the mirror cannot be made (Spark then runs with ``home`` as it is)."""
    if not (home / ZIP).is_file():
        return None
    key = hashlib.sha256(f"{home}\0{pyspark.__version__}".encode()).hexdigest()[:16]
    parent = parent or Path(tempfile.gettempdir()) / f"sparkcat-{os.getuid()}"
    mirror = parent / f"spark-home-{key}"
    if _mirrors(mirror, home):
        return mirror
    try:
        parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        if mirror.exists():  # a broken mirror (a temp cleaner took some links): make it anew
            shutil.rmtree(mirror, ignore_errors=True)
        staging = Path(tempfile.mkdtemp(prefix=".spark-home-", dir=parent))
        for entry in home.iterdir():
            if entry.name != PYTHON_DIR:
                (staging / entry.name).symlink_to(entry)
        try:
            # Atomic: a worker starting at the same time either sees the whole mirror or none.
            staging.rename(mirror)
        except OSError:
            shutil.rmtree(staging, ignore_errors=True)
    except OSError as e:
        log.debug("no Spark home without pyspark's zip (%s): Python processes import the zip", e)
        return None
    return mirror if _mirrors(mirror, home) else None


def spark_home_for_launch() -> str | None:
    """The ``SPARK_HOME`` to start the driver JVM with, or None to leave it as it is."""
    if os.environ.get("SPARK_HOME"):
        return None
    mirror = mirror_without_zips(pip_spark_home())
    return None if mirror is None else str(mirror)
