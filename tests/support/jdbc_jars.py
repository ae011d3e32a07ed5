"""JDBC driver jars for Spark's JDBC data source: Debian's packages put them in
/usr/share/java (``libpostgresql-jdbc-java`` -> postgresql.jar)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

POSTGRES_JAR = Path("/usr/share/java/postgresql.jar")
POSTGRES_PACKAGE = "libpostgresql-jdbc-java"


def postgres_jar() -> Path | None:
    """The PostgreSQL driver jar, installed with apt when missing and running as root;
    ``None`` when it is missing and cannot be installed (see :func:`missing_message`)."""
    if POSTGRES_JAR.exists():
        return POSTGRES_JAR
    if os.geteuid() == 0 and shutil.which("apt-get"):
        # a fresh machine may have no package lists yet: update them first
        for command in (
            ["apt-get", "update", "-q"],
            ["apt-get", "install", "-y", "--no-install-recommends", POSTGRES_PACKAGE],
        ):
            subprocess.run(command, check=False, capture_output=True, timeout=600)
    return POSTGRES_JAR if POSTGRES_JAR.exists() else None


def missing_message() -> str:
    return (
        f"{POSTGRES_JAR} is missing: install Debian's {POSTGRES_PACKAGE} "
        f"(apt-get install {POSTGRES_PACKAGE}) so Spark's JDBC data source finds the driver"
    )
