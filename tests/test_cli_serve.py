"""`asc-tui serve`: the workbench over HTTP + websocket, on loopback unless asked otherwise."""

from __future__ import annotations

import base64
import hashlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

from asc_tui.cli.serve_cmd import is_loopback


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_only_loopback_addresses_count_as_loopback():
    assert all(is_loopback(h) for h in ("127.0.0.1", "127.1.2.3", "::1", "localhost"))
    assert not any(is_loopback(h) for h in ("0.0.0.0", "::", "10.0.0.5", "example.com"))


def _start(*args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "asc_tui", "serve", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _get(url: str, deadline: float) -> str:
    while True:
        try:
            with urllib.request.urlopen(url, timeout=5) as r:
                return r.read().decode()
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def _stop(proc: subprocess.Popen) -> tuple[str, str]:
    proc.send_signal(signal.SIGTERM)
    try:
        return proc.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.communicate()


def test_serve_gives_the_app_page_and_a_websocket_on_loopback(tmp_path):
    port = free_port()
    proc = _start("--port", str(port))
    try:
        html = _get(f"http://127.0.0.1:{port}/", time.monotonic() + 60)
        assert "asc-tui" in html and f"ws://localhost:{port}/ws" in html
        key = base64.b64encode(os.urandom(16)).decode()
        with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
            s.sendall(
                (
                    f"GET /ws?width=80&height=24 HTTP/1.1\r\nHost: localhost:{port}\r\n"
                    "Upgrade: websocket\r\nConnection: Upgrade\r\n"
                    f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
                ).encode()
            )
            head = b""
            while b"\r\n\r\n" not in head:
                chunk = s.recv(4096)
                assert chunk, head
                head += chunk
        text = head.decode("latin-1")
        assert text.startswith("HTTP/1.1 101")
        accept = base64.b64encode(
            hashlib.sha1((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").encode()).digest()
        ).decode()
        assert f"Sec-WebSocket-Accept: {accept}".lower() in text.lower()
    finally:
        out, err = _stop(proc)
    assert f"http://localhost:{port}" in out and "ssh -L" in out
    assert "WARNING" not in err
    with pytest.raises(OSError):  # stopped: nothing listens any more
        socket.create_connection(("127.0.0.1", port), timeout=2).close()


def test_serve_binds_loopback_only_by_default_and_warns_for_an_explicit_host():
    port = free_port()
    proc = _start("--port", str(port))
    try:
        _get(f"http://127.0.0.1:{port}/", time.monotonic() + 60)
        addrs = [a for a in (socket.gethostbyname(socket.gethostname()),) if not a.startswith("127.")]
        for a in addrs:  # not reachable on the machine's own LAN address
            with pytest.raises(OSError):
                socket.create_connection((a, port), timeout=2).close()
    finally:
        _stop(proc)
    port = free_port()
    proc = _start("--host", "0.0.0.0", "--port", str(port))
    try:
        _get(f"http://127.0.0.1:{port}/", time.monotonic() + 60)
    finally:
        _, err = _stop(proc)
    assert "WARNING: binding 0.0.0.0, not loopback" in err
