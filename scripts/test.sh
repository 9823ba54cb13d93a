#!/usr/bin/env bash
# The test suite: sets up Python, builds this checkout for this machine, runs pytest.
# Extra arguments go to pytest (e.g. scripts/test.sh -k cuda -x).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
exec "$PYTHON" -m pytest tests "$@"
