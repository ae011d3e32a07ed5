"""Debian packages a test needs (Chromium, the JDBC driver jars), installed with apt-get when
the suite runs as root (as CI does).

Two pytest-xdist workers may need a package at the same moment; dpkg allows one apt-get at a
time, so installs take an exclusive lock on a file first and check again once they hold it.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from collections.abc import Callable

LOCK_FILE = "/tmp/sparkcat-tests-apt.lock"


def can_install() -> bool:
    return os.geteuid() == 0 and shutil.which("apt-get") is not None


def apt_install(packages: list[str], done: Callable[[], bool], *, recommends: bool = False) -> None:
    """Install ``packages`` unless ``done()`` already holds (checked again under the lock).

    Failures are left for the caller's own check: it names the missing package in its message.
    """
    if done() or not can_install():
        return
    with open(LOCK_FILE, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if done():
            return
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        # a fresh machine may have no package lists yet: update them first
        for command in (
            ["apt-get", "update", "-q"],
            [
                "apt-get",
                "install",
                "-y",
                "-q",
                *([] if recommends else ["--no-install-recommends"]),
                *packages,
            ],
        ):
            subprocess.run(command, check=False, env=env, capture_output=True, timeout=900)
