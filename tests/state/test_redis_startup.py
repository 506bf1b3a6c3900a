"""A Redis the store cannot use is one clear line within 5 s, for `table create` and `serve`.

Real redis-server processes: one asking for a password, one speaking only TLS
(with a CA and client certificates made here by openssl), a closed port, and a
port that accepts connections and never answers.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .redis_server import free_port, redis_process

pytestmark = pytest.mark.slow

CLI = [sys.executable, "-c", "import sys; from vtt_bridge.cli import main; sys.exit(main())"]


def cli(*argv: str, timeout: float = 20) -> tuple[int, str, str, float]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("VTT_BRIDGE_")}
    started = time.monotonic()
    done = subprocess.run([*CLI, *argv], capture_output=True, text=True, timeout=timeout, env=env)
    return done.returncode, done.stdout, done.stderr, time.monotonic() - started


def one_line_within_5s(code: int, err: str, took: float) -> None:
    assert code == 2, err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert took < 5, f"{took:.1f} s: {err}"


@pytest.fixture(scope="module")
def locked():
    with redis_process("--requirepass", "s3cret") as process:
        yield process


def test_no_password_against_a_password_redis_says_so(locked):
    code, _out, err, took = cli("table", "create", "x", "--redis", f"redis://127.0.0.1:{locked.port}/0")
    one_line_within_5s(code, err, took)
    assert "error [store_unavailable]" in err and "asks for a password and the URL gives none" in err


def test_a_wrong_password_is_worded_as_such(locked):
    code, _out, err, took = cli("table", "list", "--redis", f"redis://:wrong@127.0.0.1:{locked.port}/0")
    one_line_within_5s(code, err, took)
    assert "wrong user name or password" in err and "wrong@" not in err and "internal" not in err


def test_the_right_password_works(locked):
    code, out, err, _took = cli("table", "create", "x", "--redis", f"redis://:s3cret@127.0.0.1:{locked.port}/0")
    assert code == 0, err
    assert "GM key" in out


@pytest.mark.parametrize("command", [["table", "create", "x"], ["serve", "--port", "0"]])
def test_a_closed_port_says_connection_refused(command):
    code, _out, err, took = cli(*command, "--redis", f"redis://127.0.0.1:{free_port()}/0")
    one_line_within_5s(code, err, took)
    assert "connection refused" in err


def test_a_port_that_never_answers_is_a_timeout_not_a_hang():
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        port = silent.getsockname()[1]
        code, _out, err, took = cli("table", "create", "x", "--redis", f"redis://127.0.0.1:{port}/0", "--redis-timeout", "1")
    one_line_within_5s(code, err, took)
    assert "no answer in time" in err


@pytest.mark.parametrize("workers", ["1", "2"])
def test_serve_with_a_wrong_password_stops_with_one_line_within_5s(locked, workers):
    code, _out, err, took = cli(
        "serve", "--port", "0", "--workers", workers, "--redis", f"redis://:nope@127.0.0.1:{locked.port}/0"
    )
    # serve logs its start-up first; the error itself is one line, and nothing else follows it.
    last = err.strip().splitlines()[-1]
    assert code == 2 and took < 5, err
    assert last.startswith("error [store_unavailable]") and "wrong user name or password" in last
    assert "Traceback" not in err


# -- TLS --------------------------------------------------------------------------------


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


@pytest.fixture(scope="module")
def certificates(tmp_path_factory):
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")
    root = tmp_path_factory.mktemp("tls")
    _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.crt",
             "-days", "2", "-subj", "/CN=vtt test CA", cwd=root)
    (root / "san.cnf").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    for name in ("server", "client"):
        _openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{name}.key", "-out", f"{name}.csr",
                 "-subj", f"/CN={name}", cwd=root)
        _openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
                 "-out", f"{name}.crt", "-days", "2", "-extfile", "san.cnf", cwd=root)
    return root


@pytest.fixture(scope="module")
def tls_redis(certificates):
    c = certificates
    with redis_process(
        "--tls-cert-file", str(c / "server.crt"), "--tls-key-file", str(c / "server.key"),
        "--tls-ca-cert-file", str(c / "ca.crt"), "--tls-auth-clients", "yes", tls=True,
    ) as process:
        yield process


def test_rediss_with_a_ca_and_a_client_certificate_works(tls_redis, certificates):
    c = certificates
    code, out, err, _took = cli(
        "table", "create", "x", "--redis", f"rediss://127.0.0.1:{tls_redis.port}/0",
        "--redis-ca", str(c / "ca.crt"), "--redis-cert", str(c / "client.crt"), "--redis-key", str(c / "client.key"),
    )
    assert code == 0, err
    assert "GM key" in out


def test_rediss_without_the_client_certificate_is_one_line(tls_redis, certificates):
    code, _out, err, took = cli(
        "table", "list", "--redis", f"rediss://127.0.0.1:{tls_redis.port}/0", "--redis-ca", str(certificates / "ca.crt")
    )
    one_line_within_5s(code, err, took)
    assert "cannot use Redis" in err


@pytest.mark.parametrize("command", [["table", "create", "x"], ["serve", "--port", "0"]])
def test_rediss_to_a_port_without_tls_is_one_line(locked, certificates, command):
    code, _out, err, took = cli(
        *command, "--redis", f"rediss://127.0.0.1:{locked.port}/0", "--redis-ca", str(certificates / "ca.crt")
    )
    one_line_within_5s(code, err, took)
    assert "TLS" in err


def test_plain_redis_to_a_tls_port_is_one_line(tls_redis):
    code, _out, err, took = cli("table", "create", "x", "--redis", f"redis://127.0.0.1:{tls_redis.port}/0")
    one_line_within_5s(code, err, took)
    assert "cannot use Redis" in err


@pytest.fixture(scope="module")
def acl_redis(tmp_path_factory):
    acl = tmp_path_factory.mktemp("acl") / "users.acl"
    acl.write_text(
        "user default on nopass ~* &* +@all\n"
        # the rights docs/deploy.md gives the store's user
        "user vtt on >pw ~vtt:* &vtt:* +@read +@write +@scripting +@pubsub +@connection\n"
        "user reader on >pw ~vtt:* &vtt:* +@read +@pubsub +@connection\n"
    )
    with redis_process("--aclfile", str(acl)) as process:
        yield process


def test_an_acl_user_with_the_documented_rights_runs_the_store(acl_redis):
    url = f"redis://vtt:pw@127.0.0.1:{acl_redis.port}/0"
    code, out, err, _took = cli("table", "create", "x", "--redis", url)
    assert code == 0, err
    table = out.split()[1]
    code, out, err, _took = cli("table", "key", table, "alice", "--redis", url)
    assert code == 0 and "key for alice" in out, err


def test_an_acl_user_without_them_is_one_line_naming_the_acl(acl_redis):
    code, _out, err, took = cli("table", "create", "x", "--redis", f"redis://reader:pw@127.0.0.1:{acl_redis.port}/0")
    one_line_within_5s(code, err, took)
    assert "ACL" in err or "permission" in err.lower(), err


def test_a_cluster_without_sharded_pub_sub_is_refused_in_one_line(tmp_path):
    # A one-node Cluster whose SPUBLISH is renamed away answers as Redis 6 does: 'unknown command'.
    from .redis_server import ask

    with redis_process(
        "--cluster-enabled", "yes", "--cluster-config-file", str(tmp_path / "nodes.conf"),
        "--rename-command", "SPUBLISH", "",
    ) as node:
        ask(node.port, "CLUSTER", "ADDSLOTSRANGE", "0", "16383")
        deadline = time.monotonic() + 10
        while b"cluster_state:ok" not in ask(node.port, "CLUSTER", "INFO"):
            assert time.monotonic() < deadline, "the one-node cluster did not come up"
            time.sleep(0.05)
        code, _out, err, took = cli("table", "list", "--redis", f"redis+cluster://127.0.0.1:{node.port}")
    one_line_within_5s(code, err, took)
    assert "needs Redis 7 or later" in err and "SPUBLISH" in err, err
