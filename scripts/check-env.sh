#!/usr/bin/env bash
# Fails fast, in one line each, on what `make` cannot install by itself.
set -u
py=${1:-python3}
if ! command -v "$py" >/dev/null 2>&1; then
  echo "sparkcat needs Python >= 3.11: '$py' was not found (set PYTHON=/path/to/python3.11)." >&2; exit 1
fi
if ! "$py" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)'; then
  echo "sparkcat needs Python >= 3.11, '$py' is $("$py" -V 2>&1) (set PYTHON=/path/to/python3.11)." >&2; exit 1
fi
if ! command -v java >/dev/null 2>&1 && [ -z "${JAVA_HOME:-}" ]; then
  echo "sparkcat runs on Spark, which needs Java 17: install it (e.g. 'apt-get install openjdk-17-jre-headless') or set JAVA_HOME." >&2; exit 1
fi
exit 0
