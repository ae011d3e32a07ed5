"""An application using the embedded API in a process of its own, with no SparkSession of
its own (Connect builds one), for test_application.py:
``python application.py CONFIG_JSON APP_ID INPUT_FILE TOPIC OUT_TOPIC``.

FileStreamSource -> ``TOPIC``; ``read_stream`` with StringConverter, the value cast to int,
doubled and filtered; ``write_stream`` to ``OUT_TOPIC``. Prints ``WRITING`` once the query
runs, then keeps it running until SIGTERM (or ``STOP_AFTER_S``)."""

from __future__ import annotations

import json
import signal
import sys
import threading

from pyspark.sql import functions as F

import sparkcat

STRING = "org.apache.kafka.connect.storage.StringConverter"
STOP_AFTER_S = 300.0


def main() -> None:
    config, app_id, path, topic, out_topic = json.loads(sys.argv[1]), *sys.argv[2:6]
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with sparkcat.Connect(app_id, config) as connect:
        source = connect.add_connector(
            "numbers", {"connector.class": "FileStreamSource", "file": path, "topic": topic}
        )
        assert source.topics(wait=True, timeout=120) == [topic]
        lines = connect.read_stream([topic], converter=STRING, starting_offsets="earliest")
        doubled = lines.select((F.col("value").cast("int") * 2).alias("n")).where("n > 10")
        query = connect.write_stream(
            doubled.select(F.col("n").cast("string").alias("value")), out_topic, converter=STRING
        )
        print("WRITING", query.id, flush=True)
        stop.wait(STOP_AFTER_S)


if __name__ == "__main__":
    main()
