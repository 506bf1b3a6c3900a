"""nginx in front of two ``serve`` processes on one Redis, as docs/deploy.md configures it.

A real nginx (Debian's ``nginx-light``) runs the configuration docs/deploy.md
gives, written into a temporary directory, listening on a free loopback port, and balances two
real ``vtt-bridge serve`` processes sharing one real ``redis-server``. Players
connect from different loopback addresses (127.0.0.x), which nginx's
``hash $remote_addr`` spreads over the processes the way it spreads players'
machines. The game is played through nginx only.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from vtt_bridge.state import RedisStore

from ..state.redis_server import redis_server
from .kit import Client, seat_table
from .processes import servers
from .test_processes import BIG, Node

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
SECTION = "### Several processes on several hosts behind nginx"

# What a throwaway instance needs around the documented configuration: its files in its
# own directory. The documented lines go in the http block as they are, but for the
# addresses: the processes' and a loopback port for the listen (no TLS here).
FRAME = """\
{user}
worker_processes 1;
pid {dir}/nginx.pid;
error_log {dir}/error.log warn;
events {{ worker_connections 256; }}
http {{
    access_log {dir}/access.log;
    client_body_temp_path {dir}/body;
    proxy_temp_path {dir}/proxy;
    fastcgi_temp_path {dir}/fastcgi;
    uwsgi_temp_path {dir}/uwsgi;
    scgi_temp_path {dir}/scgi;
{documented}
}}
"""


def documented_config(backends: list[str], port: int) -> str:
    """The nginx configuration of docs/deploy.md's section, pointed at ``backends``, on ``port``."""
    text = (ROOT / "docs" / "deploy.md").read_text()
    block = text[text.index(SECTION):].split("```nginx\n", 1)[1].split("```", 1)[0]
    lines, servers_done = [], False
    for line in block.splitlines():
        bare = line.split("#", 1)[0].strip()
        if bare.startswith("server ") and bare.endswith(";"):  # an upstream's process
            if not servers_done:
                lines += [f"    server {b} max_fails=1 fail_timeout=5s;" for b in backends]
                servers_done = True
            continue
        if bare.startswith("listen "):
            line = f"    listen 127.0.0.1:{port};"
        elif bare.startswith("ssl_"):
            continue
        lines.append("    " + line)
    assert servers_done, "the documented configuration has no upstream servers"
    return "\n".join(lines)


def _nginx() -> str:
    found = shutil.which("nginx") or next((p for p in ("/usr/sbin/nginx",) if os.access(p, os.X_OK)), None)
    if found is None:
        pytest.skip("nginx is not installed (apt-get install nginx-light)")
    return found


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _get(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=5) as response:
        assert response.status == 200
        return json.loads(response.read())


@contextlib.contextmanager
def nginx(directory: Path, backends: list[str]) -> Iterator[str]:
    """nginx in front of ``backends`` (``host:port``), in the foreground; yields its URL."""
    binary = _nginx()
    port = _free_port()
    config = FRAME.format(
        # A master running as root would hand the workers to "nobody", who cannot enter a
        # private temporary directory; as any other user the line would only be warned about.
        user="user root;" if os.geteuid() == 0 else "",
        dir=directory,
        documented=documented_config(backends, port),
    )
    (directory / "nginx.conf").write_text(config)
    argv = [binary, "-p", str(directory), "-c", str(directory / "nginx.conf"), "-e", str(directory / "error.log")]
    check = subprocess.run([*argv, "-t"], capture_output=True, text=True, timeout=30)
    assert check.returncode == 0, check.stderr
    proc = subprocess.Popen([*argv, "-g", "daemon off;"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 15
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                    break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError(f"nginx did not start: {(directory / 'error.log').read_text()}") from None
                time.sleep(0.05)
        yield url
    finally:
        proc.terminate()  # SIGTERM: nginx's fast shutdown
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


@pytest.fixture(scope="module")
def redis_url():
    with redis_server() as url:
        yield url


async def _landed(urls: list[str], before: list[int]) -> int | None:
    """Which process (index into ``urls``) gained a connection since ``before``."""
    for _ in range(50):
        now = [_get(u + "/healthz")["connections"] for u in urls]
        gained = [i for i, (a, b) in enumerate(zip(before, now)) if b > a]
        if gained:
            return gained[0]
        await asyncio.sleep(0.05)
    return None


async def test_a_game_through_nginx_in_front_of_two_processes(tmp_path, redis_url):
    store = RedisStore(redis_url)
    await store.open()
    args = ("--redis", redis_url, "--port", "0", "--lease-ttl", "1", "--decision-timeout", "10")
    try:
        with servers(args, args) as processes, nginx(tmp_path, [p.url.split("//", 1)[1] for p in processes]) as url:
            direct = [p.url for p in processes]
            # /healthz through nginx.
            health = _get(url + "/healthz")
            assert health["ok"] is True and health["store"] == "redis" and "duel" in health["rulesets"]
            seat = await seat_table(Node(url, store), tokens=BIG)
            try:
                # Each player from a machine of their own; seated until one sits on each process.
                where: dict[str, int] = {}
                clients: dict[str, Client] = {}
                sources: dict[str, str] = {}

                async def sit(user: str, policy=None, *, transports=("websocket",), avoid=None) -> None:
                    for n in range(2, 40):
                        before = [_get(u + "/healthz")["connections"] for u in direct]
                        source = f"127.0.0.{n + 10 * len(where)}"
                        client = Client(url, policy, transports=transports, source=source)
                        await client.connect(seat.auth(user))
                        landed = await _landed(direct, before)
                        if landed is not None and landed != avoid:
                            where[user], clients[user], sources[user] = landed, client, source
                            seat.clients.append(client)
                            return
                        await client.close()
                    raise AssertionError(f"no address put {user} on the other process")

                async def block(decision: dict) -> str:
                    return "block"

                # The GM's client starts with long-polling and upgrades (as the web table does):
                # the hash keeps its session's requests on one process.
                await sit("gm", transports=("polling", "websocket"))
                await sit("bob", block, avoid=where["gm"])
                assert where["gm"] != where["bob"]
                gm, bob = clients["gm"], clients["bob"]
                assert gm.sio.transport() == "websocket"

                # An attack on bob's token: the process the GM is on asks bob on the other one.
                ack = await gm.ok("attack", {"ruleset": "duel", "attacker": "a", "targets": ["b"], "dice": [5, 6]})
                attack = ack["attack"]
                [question] = bob.decisions
                assert question["key"] == "defense" and question["attack"]["id"] == attack["id"]
                assert attack["decisions"][0]["how"] == "answered"
                assert attack["decisions"][0]["answer"] == {"option": "block"}
                # A second attack, its answer scripted by the GM, for a second broadcast.
                second = (
                    await gm.ok(
                        "attack",
                        {"ruleset": "duel", "attacker": "a", "targets": ["b"], "dice": [5, 6],
                         "answers": {"defense": "none"}},
                    )
                )["attack"]
                # Each broadcast reaches both players once, whichever process they are on.
                for client in (gm, bob):
                    await client.wait_for("attack.resolved", 2, timeout=10)
                await asyncio.sleep(0.5)
                for client in (gm, bob):
                    ids = [r["attack"]["id"] for r in client.named("attack.resolved")]
                    assert ids == [attack["id"], second["id"]]
                    asked = [e for e in client.named("decision.asked") if e["attack"] == attack["id"]]
                    assert len(asked) == 1
                    updated = [e["token"] for e in client.named("token.updated") if e["token"]["id"] == "b"]
                    assert [t["version"] for t in updated] == [2, 3]
                    assert updated[-1] == (await seat.tokens())["b"]
                # Both processes served: one connection each, and the same store behind nginx.
                assert sorted(_get(u + "/healthz")["connections"] for u in direct) == [1, 1]
                assert _get(url + "/healthz")["tables"] == health["tables"] + 1

                # The GM's process dies (kill -9): from the same machine the GM comes back through
                # nginx, which takes the next process, and plays on.
                processes[where["gm"]].kill()
                back = Client(url, transports=("polling", "websocket"), source=sources["gm"])
                await back.connect(seat.auth("gm"))
                seat.clients.append(back)
                scripted = {"ruleset": "duel", "attacker": "a", "targets": ["b"], "dice": [5, 6]}
                third = await back.call("attack", {**scripted, "answers": {"defense": "none"}}, timeout=20)
                assert third["ok"], third
                await bob.wait_for("attack.resolved", 3, timeout=10)
                assert _get(url + "/healthz")["ok"] is True
                assert _get(direct[where["bob"]] + "/healthz")["connections"] == 2
            finally:
                await seat.close()
    finally:
        await store.close()
