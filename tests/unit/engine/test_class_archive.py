"""Which class archive a driver JVM gets (sparkcat.engine.class_archive); making one and using
it with a real JVM is tests/integration/engine/test_class_archive.py."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from sparkcat.engine import class_archive


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    return tmp_path / "sparkcat"


def test_archives_live_in_the_users_cache_directory(cache: Path) -> None:
    path = class_archive.archive_path({}, "/opt/spark")
    assert path is not None and path.parent == cache and path.suffix == ".jsa"


def test_each_class_path_and_spark_home_has_its_own_archive(cache: Path) -> None:
    plain = class_archive.archive_path({}, "/opt/spark")
    extra = class_archive.archive_path({"spark.driver.extraClassPath": "/x.jar"}, "/opt/spark")
    other_home = class_archive.archive_path({}, "/opt/other-spark")
    assert len({plain, extra, other_home}) == 3
    assert class_archive.archive_path({}, "/opt/spark") == plain


def test_no_java_no_archive(cache: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "no-jdk"))
    assert class_archive.archive_path({}, "/opt/spark") is None
    assert class_archive.java_options({}, "/opt/spark") == []


def test_an_existing_archive_is_mapped(cache: Path) -> None:
    path = class_archive.archive_path({}, "/opt/spark")
    assert path is not None
    path.parent.mkdir(parents=True)
    path.write_bytes(b"archive")
    assert class_archive.java_options({}, "/opt/spark") == [f"-XX:SharedArchiveFile={path}"]


def test_without_an_archive_the_worker_says_how_to_make_one(
    cache: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger=class_archive.__name__):
        assert class_archive.java_options({}, "/opt/spark") == []
    assert "sparkcat jvm-archive" in caplog.text


@pytest.mark.parametrize(
    "options", ["-Xshare:off", "-XX:SharedArchiveFile=/mine.jsa", "-XX:ArchiveClassesAtExit=/x"]
)
def test_the_users_own_sharing_options_win(cache: Path, options: str) -> None:
    path = class_archive.archive_path({}, "/opt/spark")
    assert path is not None
    path.parent.mkdir(parents=True)
    path.write_bytes(b"archive")
    settings = {"spark.driver.extraJavaOptions": f"-Dx=1 {options}"}
    assert class_archive.java_options(settings, "/opt/spark") == []


def test_options_are_appended_to_the_drivers_java_options() -> None:
    out = class_archive.with_options({"spark.driver.extraJavaOptions": "-Da=1"}, ["-Xb"])
    assert out["spark.driver.extraJavaOptions"] == "-Da=1 -Xb"
    assert class_archive.with_options({}, []) == {}
