"""The Spark home the driver JVM starts from on local masters: pip's pyspark without its zips."""

from __future__ import annotations

from pathlib import Path

import pytest

from sparkcat.engine import spark_home


def _pip_home(root: Path) -> Path:
    home = root / "pyspark"
    (home / "jars").mkdir(parents=True)
    (home / "jars" / "spark-core.jar").write_bytes(b"jar")
    (home / "bin").mkdir()
    (home / "python" / "lib").mkdir(parents=True)
    (home / "python" / "lib" / "pyspark.zip").write_bytes(b"zip")
    (home / "__init__.py").write_text("")
    return home


def test_the_mirror_links_every_entry_but_the_zipped_python(tmp_path: Path) -> None:
    home = _pip_home(tmp_path)
    mirror = spark_home.mirror_without_zips(home, tmp_path / "cache")
    assert mirror is not None
    assert sorted(p.name for p in mirror.iterdir()) == ["__init__.py", "bin", "jars"]
    assert (mirror / "jars" / "spark-core.jar").read_bytes() == b"jar"
    assert not (mirror / spark_home.ZIP).exists()


def test_the_mirror_is_made_once_and_shared(tmp_path: Path) -> None:
    home = _pip_home(tmp_path)
    first = spark_home.mirror_without_zips(home, tmp_path / "cache")
    second = spark_home.mirror_without_zips(home, tmp_path / "cache")
    assert first == second
    assert [p.name for p in (tmp_path / "cache").iterdir()] == [first.name]  # no leftovers


def test_a_broken_mirror_is_made_anew(tmp_path: Path) -> None:
    home = _pip_home(tmp_path)
    mirror = spark_home.mirror_without_zips(home, tmp_path / "cache")
    assert mirror is not None
    (mirror / "jars").unlink()  # e.g. a temp-directory cleaner
    again = spark_home.mirror_without_zips(home, tmp_path / "cache")
    assert again == mirror and (mirror / "jars" / "spark-core.jar").is_file()


def test_a_spark_home_without_pysparks_zip_needs_no_mirror(tmp_path: Path) -> None:
    home = _pip_home(tmp_path)
    (home / spark_home.ZIP).unlink()
    assert spark_home.mirror_without_zips(home, tmp_path / "cache") is None


def test_no_writable_place_means_no_mirror(tmp_path: Path) -> None:
    home = _pip_home(tmp_path)
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    assert spark_home.mirror_without_zips(home, blocker / "cache") is None


def test_a_spark_home_the_user_set_is_left_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPARK_HOME", "/opt/spark")
    assert spark_home.spark_home_for_launch() is None
