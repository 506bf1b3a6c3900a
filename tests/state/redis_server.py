"""Throwaway redis-server / redis-sentinel processes on free loopback ports (for tests).

:func:`redis_server` is one Redis; :func:`sentinel_group` a primary, a replica
and three sentinels; :func:`redis_cluster` three primaries with a replica each.
Each process runs in a temporary directory and is stopped (or killed) at the end.
"""

from __future__ import annotations

import contextlib
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


_free_port = free_port


def _binary(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        pytest.skip(f"{name} is not installed (apt-get install {name})")
    return found


def ask(port: int, *command: str, password: str | None = None, timeout: float = 1.0) -> bytes:
    """One command to a Redis or sentinel on 127.0.0.1 (RESP, read until the reply looks whole)."""
    parts = ([("AUTH", password)] if password else []) + [command]
    payload = b"".join(
        b"*%d\r\n" % len(c) + b"".join(b"$%d\r\n%s\r\n" % (len(a.encode()), a.encode()) for a in c) for c in parts
    )
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as conn:
        conn.sendall(payload)
        time.sleep(0.02)
        data = b""
        conn.settimeout(0.2)
        with contextlib.suppress(OSError):
            while chunk := conn.recv(65536):
                data += chunk
                if len(parts) == 1 and data.endswith(b"\r\n"):
                    break
        return data


class RedisProcess:
    """One redis-server (or redis-sentinel) process."""

    def __init__(self, args: list[str], port: int, workdir: Path, *, sentinel: bool = False, tcp_only: bool = False) -> None:
        self.port = port
        self.workdir = workdir
        self.args = args
        self.sentinel = sentinel
        self.tcp_only = tcp_only  # a TLS port: ready once it accepts connections
        self.proc: subprocess.Popen[bytes] | None = None
        self.start()

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        binary = _binary("redis-sentinel" if self.sentinel else "redis-server")
        self.proc = subprocess.Popen(
            [binary, *self.args], cwd=self.workdir, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        self.wait_ready()

    def wait_ready(self, timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while True:
            try:
                if self.tcp_only:
                    socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                    return
                reply = ask(self.port, "PING", timeout=0.2)
                if b"PONG" in reply or b"NOAUTH" in reply:
                    return
            except OSError:
                pass
            if time.monotonic() > deadline or (self.proc is not None and self.proc.poll() is not None):
                raise RuntimeError(f"redis did not start on port {self.port}")
            time.sleep(0.05)

    def kill(self) -> None:
        """kill -9: no goodbye, as when a machine dies."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill()


def _server_args(port: int, *extra: str) -> list[str]:
    return [
        "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
        "--protected-mode", "yes", *extra,
    ]


@contextlib.contextmanager
def redis_process(*extra: str, tls: bool = False) -> Iterator[RedisProcess]:
    """One redis-server with extra arguments (``--requirepass x``; with ``tls``, its port is a TLS
    port and the arguments give the certificates); skips without redis-server."""
    _binary("redis-server")
    # A Cluster node also listens on its port + 10000 (the cluster bus): a port above 55535 fails.
    port = _cluster_port() if "--cluster-enabled" in extra else free_port()
    args = _server_args(0, "--tls-port", str(port), *extra) if tls else _server_args(port, *extra)
    with tempfile.TemporaryDirectory(prefix="vtt-redis-") as workdir:
        process = RedisProcess(args, port, Path(workdir), tcp_only=tls)
        try:
            yield process
        finally:
            process.stop()


@contextlib.contextmanager
def redis_server() -> Iterator[str]:
    """Yields a ``redis://`` URL; skips the test when redis-server is not installed."""
    with redis_process() as process:
        yield process.url


class SentinelGroup:
    def __init__(self, primary: RedisProcess, replicas: list[RedisProcess], sentinels: list[RedisProcess]) -> None:
        self.primary, self.replicas, self.sentinels = primary, replicas, sentinels

    @property
    def url(self) -> str:
        hosts = ",".join(f"127.0.0.1:{s.port}" for s in self.sentinels)
        return f"redis+sentinel://{hosts}/vttmain"

    def primary_port(self) -> int:
        reply = ask(self.sentinels[0].port, "SENTINEL", "get-master-addr-by-name", "vttmain")
        return int(reply.split(b"\r\n")[4])


@contextlib.contextmanager
def sentinel_group(down_after_ms: int = 600) -> Iterator[SentinelGroup]:
    """A primary, two replicas and three sentinels (quorum 2) watching it as ``vttmain``.

    Two replicas, so that once one is promoted the new primary still has one to confirm writes."""
    _binary("redis-server")
    _binary("redis-sentinel")
    with tempfile.TemporaryDirectory(prefix="vtt-sentinel-") as workdir:
        root = Path(workdir)
        started: list[RedisProcess] = []
        try:
            primary_port = free_port()
            for name in ("primary", "replica1", "replica2"):
                port = primary_port if name == "primary" else free_port()
                extra = () if name == "primary" else ("--replicaof", "127.0.0.1", str(primary_port))
                (root / name).mkdir()
                started.append(RedisProcess(_server_args(port, *extra), port, root / name))
            primary, *replicas = started
            deadline = time.monotonic() + 10
            while not all(b"master_link_status:up" in ask(r.port, "INFO", "replication") for r in replicas):
                if time.monotonic() > deadline:
                    raise RuntimeError("the replicas did not catch up")
                time.sleep(0.05)
            sentinels = []
            for i in range(3):
                port = free_port()
                (root / f"s{i}").mkdir()
                conf = root / f"s{i}" / "sentinel.conf"
                conf.write_text(
                    f"port {port}\nbind 127.0.0.1\nsentinel resolve-hostnames no\n"
                    f"sentinel monitor vttmain 127.0.0.1 {primary_port} 2\n"
                    f"sentinel down-after-milliseconds vttmain {down_after_ms}\n"
                    "sentinel failover-timeout vttmain 4000\nsentinel parallel-syncs vttmain 1\n"
                )
                sentinel = RedisProcess([str(conf)], port, root / f"s{i}", sentinel=True)
                sentinels.append(sentinel)
                started.append(sentinel)
            group = SentinelGroup(primary, replicas, sentinels)
            # Every sentinel knows the replica and the other sentinels before the test starts.
            deadline = time.monotonic() + 15
            while True:
                replies = [ask(s.port, "SENTINEL", "master", "vttmain") for s in sentinels]
                if all(b"num-other-sentinels\r\n$1\r\n2" in r and b"num-slaves\r\n$1\r\n2" in r for r in replies):
                    break
                if time.monotonic() > deadline:
                    raise RuntimeError("the sentinels did not find each other")
                time.sleep(0.1)
            yield group
        finally:
            for process in reversed(started):
                process.stop()


class Cluster:
    def __init__(self, nodes: list[RedisProcess]) -> None:
        self.nodes = nodes

    @property
    def url(self) -> str:
        return "redis+cluster://" + ",".join(f"127.0.0.1:{n.port}" for n in self.nodes[:3])

    def live(self) -> list[RedisProcess]:
        return [n for n in self.nodes if n.proc is not None and n.proc.poll() is None]

    def primary_of(self, slot_key: str) -> RedisProcess | None:
        """The node serving ``slot_key``'s slot now, as the first live node that knows sees it."""
        for node in self.live():
            try:
                slot = int(ask(node.port, "CLUSTER", "KEYSLOT", slot_key).split(b":")[1].split(b"\r")[0])
                lines = ask(node.port, "CLUSTER", "NODES").decode(errors="replace").splitlines()
            except (OSError, ValueError, IndexError):
                continue
            for line in lines:
                fields = line.split()
                if len(fields) > 8 and "master" in fields[2] and "fail" not in fields[2]:
                    for part in fields[8:]:
                        low, _, high = part.partition("-")
                        if low.isdigit() and int(low) <= slot <= int(high or low):
                            port = int(fields[1].split("@")[0].rsplit(":", 1)[1])
                            return next((n for n in self.nodes if n.port == port), None)
        return None


    def kill_primary_of(self, slot_key: str) -> RedisProcess:
        """kill -9 the primary serving ``slot_key``, and (as a supervisor would) start it again once its
        replica took over: it joins as the new primary's replica, which ``WAIT`` then counts on."""
        victim = self.primary_of(slot_key)
        assert victim is not None
        victim.kill()

        def restart() -> None:
            deadline = time.monotonic() + 20
            # Only once another node serves its slots: back too early, an empty node
            # (no persistence) would serve them itself.
            while self.primary_of(slot_key) in (victim, None) and time.monotonic() < deadline:
                time.sleep(0.1)
            victim.start()

        threading.Thread(target=restart, daemon=True).start()
        return victim

    def shard_subscribers(self, port: int, channel: str) -> int:
        """``PUBSUB SHARDNUMSUB``: the connections subscribed to the sharded ``channel`` on one node."""
        reply = ask(port, "PUBSUB", "SHARDNUMSUB", channel).split(b"\r\n")
        return int(reply[-2][1:])


def _cluster_port() -> int:
    """A free port whose cluster bus port (+10000) is free too."""
    for _ in range(200):
        port = free_port()
        if port + 10000 > 65535:
            continue
        with socket.socket() as bus:
            try:
                bus.bind(("127.0.0.1", port + 10000))
            except OSError:
                continue
        return port
    raise RuntimeError("no free port pair for a cluster node")


@contextlib.contextmanager
def redis_cluster(node_timeout_ms: int = 1000) -> Iterator[Cluster]:
    """Three primaries with a replica each, made into a Cluster by redis-cli."""
    _binary("redis-server")
    cli = _binary("redis-cli")
    with tempfile.TemporaryDirectory(prefix="vtt-cluster-") as workdir:
        root = Path(workdir)
        nodes: list[RedisProcess] = []
        try:
            for i in range(6):
                port = _cluster_port()
                (root / f"n{i}").mkdir()
                args = _server_args(
                    port, "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                    "--cluster-node-timeout", str(node_timeout_ms), "--cluster-replica-validity-factor", "0",
                )
                nodes.append(RedisProcess(args, port, root / f"n{i}"))
            subprocess.run(
                [cli, "--cluster", "create", *(f"127.0.0.1:{n.port}" for n in nodes),
                 "--cluster-replicas", "1", "--cluster-yes"],
                check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60,
            )
            deadline = time.monotonic() + 20
            while not all(b"cluster_state:ok" in ask(n.port, "CLUSTER", "INFO") for n in nodes) or not all(
                b"role:master" in info or b"master_link_status:up" in info
                for info in (ask(n.port, "INFO", "replication") for n in nodes)
            ):
                if time.monotonic() > deadline:
                    raise RuntimeError("the cluster did not come up")
                time.sleep(0.1)
            yield Cluster(nodes)
        finally:
            for node in nodes:
                node.stop()
