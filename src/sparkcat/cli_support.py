"""What the standalone and distributed command lines share (neither imports the other)."""

from __future__ import annotations

import logging
import sys

log = logging.getLogger("sparkcat")


def setup_logging() -> None:
    logging.basicConfig(
        level=logging.INFO,
        format="[%(asctime)s] %(levelname)s %(message)s (%(name)s)",
        stream=sys.stderr,
    )
    for noisy in ("py4j", "uvicorn.error"):
        logging.getLogger(noisy).setLevel(logging.WARNING)


__all__ = ["setup_logging"]
