"""MySQL and MariaDB change data capture: ``io.debezium.connector.mysql.MySqlConnector`` and
``io.debezium.connector.mariadb.MariaDbConnector`` (``source_connector``, ``source_task``),
reading the ROW binlog as a replica does (``binlog_reader``), snapshots consistent with a
binlog position (``snapshot``), offsets in Debezium's shape (``offsets``) and the server
checks (``server``)."""

# The binlog client and its driver (the 'cdc' extra) are used lazily, inside functions; they
# are imported here too so that an install without them refuses these connectors by name of
# the extra when they are resolved, instead of failing in the middle of a start (~10 ms).
import pymysql  # noqa: F401
import pymysqlreplication  # noqa: F401

from sparkcat.connectors.debezium.mysql.source_connector import MariaDbConnector, MySqlConnector
from sparkcat.connectors.debezium.mysql.source_task import MariaDbConnectorTask, MySqlConnectorTask

__all__ = ["MariaDbConnector", "MariaDbConnectorTask", "MySqlConnector", "MySqlConnectorTask"]
