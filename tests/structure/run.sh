#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# make check: the structural checks of the source tree (check_structure.py).
exec /usr/bin/python3 "${APEX_SRCDIR:-$(dirname "$0")/../..}/tests/structure/check_structure.py" "${APEX_SRCDIR:-$(dirname "$0")/../..}"
