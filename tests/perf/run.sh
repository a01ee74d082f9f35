#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# make check: the guard on the query path's instructions (tests/perf/guard.py).
#   tests/perf/run.sh            compare with tests/perf/baseline.txt
#   tests/perf/run.sh --update   rewrite it (make perf-baseline)
exec /usr/bin/python3 "${APEX_SRCDIR:-$(dirname "$0")/../..}/tests/perf/guard.py" "$@"
