"""One member of an embedded Connect cluster in its own process (with its own local
SparkSession), for test_cluster.py: ``python member.py APP_ID CONFIG_JSON``.

Prints ``JOINED <worker id> <rest url>`` once it is in the group and ``SPARK READY`` once its
session is up; closes on SIGTERM.
"""

from __future__ import annotations

import json
import signal
import sys
import threading

import sparkcat


def main() -> None:
    app_id, config = sys.argv[1], json.loads(sys.argv[2])
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with sparkcat.Connect(app_id, config) as connect:
        print(f"JOINED {connect.worker_id} {connect.rest_url}", flush=True)
        connect.spark  # noqa: B018 - waits until the session is built
        print("SPARK READY", flush=True)
        stop.wait()


if __name__ == "__main__":
    main()
