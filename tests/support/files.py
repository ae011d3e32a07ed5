"""Reading the files that FileStream connectors and test plugins write while a test waits."""

from __future__ import annotations

from pathlib import Path


def lines_of(path: Path) -> list[str]:
    """The lines written so far; none while the file does not exist yet."""
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []
