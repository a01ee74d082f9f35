# SPDX-License-Identifier: BSD-3-Clause
"""The processes the soak starts, each stopped by its PID at the end,
also on a failure, Ctrl-C or SIGTERM."""

import signal
import subprocess
import time

STOP_TIMEOUT = 15.0


class Interrupted(Exception):
    """SIGTERM (or SIGINT) asked the soak to stop."""


def raise_on_signals():
    """SIGTERM and SIGINT end the run through the same clean-up as a failure."""
    def handler(signum, _frame):
        raise Interrupted("signal %d" % signum)
    signal.signal(signal.SIGTERM, handler)
    signal.signal(signal.SIGINT, handler)


def ignore_signals():
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


class Processes:
    """Every process started, newest last: stop_all() ends them newest first."""

    def __init__(self):
        self.procs = []

    def start(self, cmd, log_path=None, stdout=None, cwd=None, stop_signal=signal.SIGTERM):
        out = open(log_path, "wb") if log_path else (stdout or subprocess.DEVNULL)
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out,
                                stderr=subprocess.STDOUT if log_path else subprocess.DEVNULL,
                                cwd=cwd)
        if log_path:
            out.close()  # the child holds its own descriptor
        proc.stop_signal = stop_signal
        self.procs.append(proc)
        return proc

    @staticmethod
    def stop(proc):
        """proc stopped by its PID: its stop signal, then SIGKILL."""
        if proc.poll() is not None:
            return proc.returncode
        try:
            proc.send_signal(proc.stop_signal)
            return proc.wait(STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            proc.kill()
            return proc.wait(STOP_TIMEOUT)

    def stop_all(self):
        while self.procs:
            proc = self.procs.pop()
            try:
                self.stop(proc)
            except Exception:  # noqa: BLE001 (the next one must still be stopped)
                try:
                    proc.kill()
                except OSError:
                    pass


def wait_until(predicate, bound, step=0.05):
    """True once predicate() is, False after bound seconds."""
    deadline = time.monotonic() + bound
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(step)
    return predicate()
