"""Waiting for a service started in a child process (tests of irscale serve and gunicorn)."""
from __future__ import annotations

import subprocess
import time
from pathlib import Path

import httpx


def wait_for_healthz(http: httpx.Client, proc: subprocess.Popen, log: Path, seconds: float) -> None:
    """Return once ``/healthz`` answers 200; fail with the server's log when it exits, or
    after ``seconds``."""
    deadline = time.monotonic() + seconds
    while True:
        assert proc.poll() is None, log.read_text()
        try:
            if http.get("/healthz").status_code == 200:
                return
        except httpx.TransportError:
            assert time.monotonic() < deadline, f"the server did not answer /healthz within {seconds:g} s"
            time.sleep(0.2)
