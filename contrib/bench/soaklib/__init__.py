# SPDX-License-Identifier: BSD-3-Clause
"""The soak's pieces (contrib/bench/soak is the command)."""
