"""Two clusters for the MirrorMaker tests: the session's broker is "A", a second embedded
broker started for the module is "B" (``tests/support/mirror.py``)."""

from tests.support.mirror import second_broker

__all__ = ["second_broker"]
