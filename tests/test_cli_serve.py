"""`asc-tui serve`: the workbench over HTTP + websocket, on loopback unless asked otherwise."""

from __future__ import annotations

import asyncio
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


def test_without_textual_serve_the_hint_installs_the_extra_editable(monkeypatch, capsys):
    """`pip install '.[serve]'` would replace the quick start's editable install; the hint must not."""
    from asc_tui.cli import main

    monkeypatch.setitem(sys.modules, "textual_serve", None)  # import fails as if not installed
    monkeypatch.setitem(sys.modules, "textual_serve.server", None)
    assert main(["serve"]) == 2
    err = capsys.readouterr().err
    assert "pip install -e '.[serve]'" in err and "asc-tui[serve]" not in err


# -- the app processes end with their page and with the server --------------------------------


def _children(pid: int) -> dict[int, str]:
    """Every live descendant of `pid` (from /proc: pid -> command line)."""
    parents: dict[int, list[int]] = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as fh:
                    ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            parents.setdefault(ppid, []).append(int(d))
    out, todo = {}, [pid]
    while todo:
        for kid in parents.get(todo.pop(), []):
            out[kid] = _cmdline(kid)
            todo.append(kid)
    return out


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return fh.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _alive(pids) -> list[int]:
    """The pids still running (a zombie has ended: its parent just has not reaped it yet)."""
    live = []
    for p in pids:
        try:
            with open(f"/proc/{p}/stat") as fh:
                state = fh.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state not in ("Z", "X"):
            live.append(p)
    return live


def _apps(server: subprocess.Popen) -> dict[int, str]:
    """The workbench processes (not a shell that may start them)."""
    return {
        p: c
        for p, c in _children(server.pid).items()
        if "-m asc_tui" in c and " serve " not in c and not c.startswith(("/bin/sh", "sh "))
    }


def _wait_gone(pids, seconds: float) -> list[int]:
    deadline = time.monotonic() + seconds
    while _alive(pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    return _alive(pids)


def _serving(ops) -> tuple[subprocess.Popen, int]:
    pytest.importorskip("textual_serve")
    port = free_port()
    proc = _start(str(ops), "--port", str(port))
    _get(f"http://127.0.0.1:{port}/", time.monotonic() + 60)
    return proc, port


def _open_page(port: int) -> socket.socket:
    """A page's websocket, opened and then never read (a frozen or background tab)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    key = base64.b64encode(os.urandom(16)).decode()
    s.sendall(
        (
            f"GET /ws?width=120&height=40 HTTP/1.1\r\nHost: localhost:{port}\r\n"
            "Upgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        ).encode()
    )
    return s


def _until_app(server: subprocess.Popen, seconds: float = 60) -> dict[int, str]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        apps = _apps(server)
        if apps and any("worker_child" in c for c in _children(server.pid).values()):
            return apps  # the workbench is up: its worker process runs
        time.sleep(0.2)
    raise AssertionError(f"no workbench started: {_children(server.pid)}")


def _reap(server: subprocess.Popen, pids) -> None:
    for p in _alive(pids):
        os.kill(p, signal.SIGKILL)
    if server.poll() is None:
        server.kill()
    server.communicate(timeout=20)


def test_the_app_of_a_page_ends_when_the_page_goes(ops):
    aiohttp = pytest.importorskip("aiohttp")
    server, port = _serving(ops)
    seen: dict[int, str] = {}
    try:

        async def visit() -> None:
            async with aiohttp.ClientSession() as session:
                ws = await session.ws_connect(f"http://127.0.0.1:{port}/ws?width=80&height=24")
                apps = await asyncio.to_thread(_until_app, server)
                seen.update(_children(server.pid))
                assert len(apps) == 1
                await ws.receive(timeout=30)  # it draws
                await ws.close()

        asyncio.run(visit())
        assert _wait_gone(seen, 10) == [], {p: seen[p] for p in _alive(seen)}
        assert server.poll() is None  # the server stays for the next page
    finally:
        _reap(server, seen)


def test_sigterm_ends_the_server_and_every_app_even_while_a_page_stopped_reading(ops):
    server, port = _serving(ops)
    page = _open_page(port)
    seen: dict[int, str] = {}
    try:
        _until_app(server)
        time.sleep(2)  # the app draws into a page that reads nothing
        seen = _children(server.pid)
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(15)
        except subprocess.TimeoutExpired:
            pytest.fail("the server did not end within 15 s of SIGTERM")
        assert _wait_gone(seen, 5) == [], {p: seen[p] for p in _alive(seen)}
    finally:
        page.close()
        _reap(server, seen)


def test_the_apps_end_when_their_server_is_killed(ops):
    server, port = _serving(ops)
    page = _open_page(port)
    seen: dict[int, str] = {}
    try:
        apps = _until_app(server)
        seen = _children(server.pid)
        server.kill()  # no clean-up in the server: the app sees its input end
        server.wait(10)
        assert _wait_gone(apps, 10) == [], apps
        assert _wait_gone(seen, 5) == [], {p: seen[p] for p in _alive(seen)}
    finally:
        page.close()
        _reap(server, seen)
