# SPDX-License-Identifier: BSD-3-Clause
"""A task run every interval seconds on a thread of its own until the
soak's stop event; each run is bounded by its own time-outs, and an
exception is kept (with its time) for the table rather than ending the
thread."""

import threading
import time


class Periodic(threading.Thread):
    def __init__(self, name, interval, task, stop, first_delay=0.0):
        super().__init__(name=name, daemon=True)
        self.interval = interval
        self.task = task
        self.stop_event = stop
        self.first_delay = first_delay
        self.runs = 0
        self.failures = []  # [(seconds since start, message)]
        self.t0 = time.monotonic()

    def run(self):
        if self.stop_event.wait(self.first_delay):
            return
        due = time.monotonic()
        while not self.stop_event.is_set():
            try:
                self.task()
                self.runs += 1
            except Exception as e:  # noqa: BLE001 (kept for the table)
                self.failures.append((time.monotonic() - self.t0, "%s: %s" % (
                    type(e).__name__, e)))
            due += self.interval
            self.stop_event.wait(max(0.0, due - time.monotonic()))
