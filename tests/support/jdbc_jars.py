"""JDBC driver jars for Spark's JDBC data source: Debian's packages put them in
/usr/share/java (``libpostgresql-jdbc-java`` -> postgresql.jar, ``libmariadb-java`` ->
mariadb-java-client.jar)."""

from __future__ import annotations

from pathlib import Path

from tests.support.apt import apt_install

POSTGRES_JAR = Path("/usr/share/java/postgresql.jar")
POSTGRES_PACKAGE = "libpostgresql-jdbc-java"
MARIADB_JAR = Path("/usr/share/java/mariadb-java-client.jar")
MARIADB_PACKAGE = "libmariadb-java"

_PACKAGES = {POSTGRES_JAR: POSTGRES_PACKAGE, MARIADB_JAR: MARIADB_PACKAGE}


def jdbc_jars() -> list[Path]:
    """The PostgreSQL and MariaDB driver jars that exist, installed with apt (one run for
    both) when missing and running as root."""
    missing = [package for jar, package in _PACKAGES.items() if not jar.exists()]
    if missing:
        apt_install(missing, lambda: all(jar.exists() for jar in _PACKAGES))
    return [jar for jar in _PACKAGES if jar.exists()]


def postgres_jar() -> Path | None:
    """The PostgreSQL driver jar (installed as :func:`jdbc_jars` does), or ``None``."""
    return POSTGRES_JAR if POSTGRES_JAR in jdbc_jars() else None


def mariadb_jar() -> Path | None:
    """The MariaDB driver jar (installed as :func:`jdbc_jars` does), or ``None``."""
    return MARIADB_JAR if MARIADB_JAR in jdbc_jars() else None


def missing_message(jar: Path = POSTGRES_JAR) -> str:
    package = _PACKAGES[jar]
    return (
        f"{jar} is missing: install Debian's {package} (apt-get install {package}) so "
        "Spark's JDBC data source finds the driver"
    )
