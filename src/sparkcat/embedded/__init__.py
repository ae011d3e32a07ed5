"""KIP-26's embedded API: Kafka Connect inside a Python or Spark application.

``sparkcat.Connect(app_id, config=None, *, spark=None)`` (:class:`Connect`) joins the
Connect cluster ``app_id`` from the application's process and runs connectors on its
SparkSession; ``add_connector`` returns a :class:`Connector` handle. See docs/embedded.md.
"""

from sparkcat.embedded.connect import Connect
from sparkcat.embedded.connector import Connector
from sparkcat.embedded.errors import ConnectorConfigError

__all__ = ["Connect", "Connector", "ConnectorConfigError"]
