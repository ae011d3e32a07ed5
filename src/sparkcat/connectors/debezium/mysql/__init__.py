"""MySQL and MariaDB change data capture: ``io.debezium.connector.mysql.MySqlConnector`` and
``io.debezium.connector.mariadb.MariaDbConnector`` (``source_connector``, ``source_task``),
reading the ROW binlog as a replica does (``binlog_reader``), snapshots consistent with a
binlog position (``snapshot``), offsets in Debezium's shape (``offsets``) and the server
checks (``server``)."""

from sparkcat.connectors.debezium.mysql.source_connector import MariaDbConnector, MySqlConnector
from sparkcat.connectors.debezium.mysql.source_task import MariaDbConnectorTask, MySqlConnectorTask

__all__ = ["MariaDbConnector", "MariaDbConnectorTask", "MySqlConnector", "MySqlConnectorTask"]
