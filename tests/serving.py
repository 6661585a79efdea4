"""Services started in child processes (tests of irscale serve, the deployment of
docs/service.md, scripts/attack_service.py): waiting for them, and the deployment itself."""
from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


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
            pass
        assert time.monotonic() < deadline, f"the server did not answer /healthz within {seconds:g} s"
        time.sleep(0.2)


def doc_block(first_line: str) -> str:
    """The code block of docs/service.md that starts with ``first_line``."""
    text = (ROOT / "docs" / "service.md").read_text()
    block = text[text.index(first_line):]
    return block[:block.index("```")]


class Deployment:
    """The deployment of docs/service.md ("Deployment") on loopback, in ``folder``, over
    ``store``: gunicorn with the documented gunicorn.conf.py and, when ``nginx`` and nginx is
    installed, nginx in front with the documented nginx.conf (:attr:`front` says which
    answers at :attr:`url`). Use as a context manager; the processes are stopped at its end."""

    def __init__(self, store: Path, folder: Path, nginx: bool = True):
        self.folder, back = folder, free_port()
        config = doc_block("# gunicorn.conf.py")
        assert '"tables"' in config and "127.0.0.1:8001" in config
        config = config.replace('"tables"', json.dumps(str(store))).replace("127.0.0.1:8001", f"127.0.0.1:{back}")
        (folder / "gunicorn.conf.py").write_text(config)
        self.log = folder / "deployment.log"
        self._out = open(self.log, "w+")
        self.gunicorn = self._start([sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py"])
        self.nginx, self.front, port = None, "gunicorn", back
        if nginx and shutil.which("nginx"):
            port = free_port()
            config = doc_block("# nginx.conf").replace("127.0.0.1:8001", f"127.0.0.1:{back}")
            (folder / "nginx.conf").write_text(config.replace("127.0.0.1:8000", f"127.0.0.1:{port}"))
            user = " user root;" if os.geteuid() == 0 else ""      # workers that may write in folder
            self.nginx = self._start(["nginx", "-p", str(folder), "-e", "stderr", "-c", "nginx.conf", "-g",
                                      "daemon off;" + user])
            self.front = "nginx"
        self.port, self.url = port, f"http://127.0.0.1:{port}"

    def _start(self, args: list[str]) -> subprocess.Popen:
        return subprocess.Popen(args, cwd=self.folder, stdout=self._out, stderr=subprocess.STDOUT)

    def __enter__(self) -> Deployment:
        try:
            with httpx.Client(base_url=self.url, timeout=10) as http:
                for proc in (self.gunicorn, self.nginx):
                    if proc is not None:
                        wait_for_healthz(http, proc, self.log, 90)
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> str:
        """Stop nginx and gunicorn; their log."""
        for proc in (self.nginx, self.gunicorn):
            if proc is not None and proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        self._out.close()
        return self.log.read_text()
