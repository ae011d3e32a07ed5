"""``sparkcat jvm-archive`` makes a class archive a later driver JVM really maps its classes
from (:mod:`sparkcat.engine.class_archive`), each in a process of its own."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.spark, pytest.mark.slow]

SPARKCAT = str(Path(sys.executable).with_name("sparkcat"))


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cache")


def _env(cache: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "SPARK_HOME"}
    return {**env, "XDG_CACHE_HOME": str(cache)}


def _archive(cache: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [SPARKCAT, "jvm-archive", *args],
        env=_env(cache),
        capture_output=True,
        text=True,
        timeout=400,
    )


def test_bad_arguments_are_one_line_and_exit_2(cache: Path, tmp_path: Path) -> None:
    for args in (["--bogus"], [str(tmp_path / "missing.properties")]):
        done = _archive(cache, *args)
        assert done.returncode == 2, done
        assert len(done.stderr.strip().splitlines()) == 1 and done.stderr.startswith("sparkcat:")
    assert not (cache / "sparkcat").exists()


@pytest.fixture(scope="module")
def archive(cache: Path) -> Path:
    done = _archive(cache)
    assert done.returncode == 0, done.stderr
    files = list((cache / "sparkcat").glob("*.jsa"))
    assert len(files) == 1 and str(files[0]) in done.stdout
    return files[0]


def test_the_archive_is_made_once(cache: Path, archive: Path) -> None:
    assert archive.stat().st_size > 10_000_000  # Spark's classes, not an empty file
    assert [p.name for p in archive.parent.iterdir()] == [archive.name]  # no partial file left
    made = archive.stat().st_mtime_ns
    done = _archive(cache, "--if-missing")
    assert done.returncode == 0 and "is there" in done.stdout
    assert archive.stat().st_mtime_ns == made


def test_a_later_session_maps_sparks_classes_from_the_archive(
    cache: Path, archive: Path, tmp_path: Path
) -> None:
    loads = tmp_path / "class-load.log"
    script = (
        "import sys\n"
        "from sparkcat.engine.session import build_session\n"
        "spark = build_session({'spark.driver.extraJavaOptions': sys.argv[1]})\n"
        "print(spark.range(3).count())\n"
        "spark.stop()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, f"-Xlog:class+load=info:file={loads}"],
        env={**_env(cache), "LOG_DIR": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0 and done.stdout.strip() == "3", done.stderr
    lines = loads.read_text().splitlines()
    from_archive = [line for line in lines if "shared objects file (top)" in line]
    spark_classes = [line for line in from_archive if " org.apache.spark." in line]
    assert len(from_archive) > 3000, len(from_archive)
    assert len(spark_classes) > 1000, len(spark_classes)
