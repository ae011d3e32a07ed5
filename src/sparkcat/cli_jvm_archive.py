"""``sparkcat jvm-archive [--if-missing] [WORKER.properties]``: make the class archive that
halves the start of a worker's Spark session (:mod:`sparkcat.engine.class_archive`).

The worker file's ``spark.*`` keys choose the archive (``spark.driver.extraClassPath`` changes
the classes the driver loads); without one, sparkcat's defaults. ``make setup`` runs it with
``--if-missing``. Exit codes: 0 when the archive is there, 1 when none could be made (the
worker still runs, only slower to start), 2 for a usage error.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

USAGE = "usage: sparkcat jvm-archive [--if-missing] [WORKER.properties]"


def jvm_archive_main(args: Sequence[str]) -> int:
    if_missing = "--if-missing" in args
    rest = [a for a in args if a != "--if-missing"]
    if len(rest) > 1 or any(a.startswith("-") for a in rest):
        print(f"sparkcat: {USAGE}", file=sys.stderr)
        return 2
    from sparkcat.kafka.properties import load_properties

    try:
        config = load_properties(rest[0]) if rest else {}
    except (OSError, ValueError) as exc:
        print(f"sparkcat: cannot read the worker config {rest[0]}: {exc}", file=sys.stderr)
        return 2
    from sparkcat.engine import class_archive

    existing = class_archive.archive_for(config)
    if if_missing and existing is not None and existing.is_file():
        print(f"sparkcat: Spark's JVM class archive is there: {existing}")
        return 0
    print("sparkcat: making Spark's JVM class archive (a session and two small jobs, ~20 s)")
    try:
        path, seconds = class_archive.make_archive(config)
    except Exception as exc:
        print(f"sparkcat: no JVM class archive made: {exc}", file=sys.stderr)
        return 1
    size_mb = path.stat().st_size / 1e6
    print(f"sparkcat: Spark's JVM class archive: {path} ({size_mb:.0f} MB, {seconds:.0f} s)")
    return 0
