"""Real ``vtt-bridge serve`` processes for the tests that kill, race and share them."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CODE = "import sys; from vtt_bridge.cli import main; sys.exit(main(sys.argv[1:]))"


@dataclasses.dataclass
class Node:
    """What ``seat_table`` needs of a server process: its URL and the (shared) store."""

    url: str
    store: object


class ServerProcess:
    """``vtt-bridge --plugin tests.server.duel_plugin serve ARGS`` in its own process."""

    def __init__(self, *args: str) -> None:
        argv = [sys.executable, "-c", CODE, "--plugin", "tests.server.duel_plugin", "serve", *args]
        argv += ["--log-level", "warning"]
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        self.proc = subprocess.Popen(
            argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
            start_new_session=True,
        )
        assert self.proc.stdout is not None
        deadline = time.monotonic() + 90
        self.url = ""
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            match = re.search(r"listening on (http://\S+)", line)
            if match:
                self.url = match.group(1)
                break
            if not line and self.proc.poll() is not None:
                break
        if not self.url:
            self.kill()
            raise RuntimeError("the server process did not start")

    @property
    def pid(self) -> int:
        return self.proc.pid

    def kill(self) -> None:
        """kill -9 the server and everything it started."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=10)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.kill()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)


@contextlib.contextmanager
def servers(*argvs: tuple[str, ...]) -> Iterator[list[ServerProcess]]:
    started: list[ServerProcess] = []
    try:
        for argv in argvs:
            started.append(ServerProcess(*argv))
        yield started
    finally:
        for server in started:
            server.stop()


def children(pid: int) -> list[int]:
    """The processes whose parent is ``pid``."""
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                stat = (entry / "stat").read_text()
                if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                    out.append(int(entry.name))
    return out
