"""sparkcat: Kafka Connect re-built in Python, with its data pipeline on Apache Spark.

The plugin API that connectors, converters and transforms are written against is
:mod:`sparkcat.api`; everything else is the framework that runs them. ``sparkcat.Connect``
is the embedded API (:mod:`sparkcat.embedded`), imported on first use so that importing
``sparkcat.api`` stays light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sparkcat.embedded import Connect

__version__ = "0.1.0"
__all__ = ["Connect", "__version__"]


def __getattr__(name: str) -> Any:
    if name == "Connect":
        from sparkcat.embedded import Connect

        return Connect
    raise AttributeError(f"module 'sparkcat' has no attribute {name!r}")
