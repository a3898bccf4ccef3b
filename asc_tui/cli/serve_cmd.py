"""`asc-tui serve [PATH]`: the same workbench in a browser, through textual-serve (opt-in).

Each browser tab gets its own `asc-tui PATH` process, driven over a websocket, which ends when
the tab goes or the server stops (`serve_apps`). The server binds
127.0.0.1 by default: on a dev server, forward the port over SSH (`ssh -L 8000:127.0.0.1:8000
host`) and open http://localhost:8000. Anything but loopback must be asked for with `--host`,
and then comes with a warning — whoever reaches the port runs operators (code) as you.
Needs the optional extra: `pip install -e '.[serve]'` in the checkout (`asc_tui.install_hint`).
"""

from __future__ import annotations

import ipaddress
import shlex
import sys

from .. import install_hint

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000


def add_parser(sub) -> None:
    p = sub.add_parser("serve", help="serve the workbench to a browser (127.0.0.1; needs asc-tui[serve])")
    p.add_argument("path", nargs="?", help="operators directory (as for `asc-tui PATH`)")
    p.add_argument(
        "--host",
        default=None,
        help=f"address to bind (default {DEFAULT_HOST}; anything else is reachable by others: a warning)",
    )
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT})")
    p.add_argument("--theme", help="theme name")
    p.add_argument("--chip", help="chip model")


def is_loopback(host: str) -> bool:
    """127.0.0.0/8, ::1 and "localhost"; everything else (0.0.0.0, a LAN address, a name) is not."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def workbench_command(args) -> str:
    """The command each browser session runs: this interpreter, the same workbench options."""
    cmd = [sys.executable, "-m", "asc_tui"]
    if args.path:
        cmd.append(args.path)
    for flag in ("theme", "chip"):
        if getattr(args, flag):
            cmd += [f"--{flag}", getattr(args, flag)]
    return shlex.join(cmd)


def main(args) -> int:
    try:
        from .serve_apps import WorkbenchServer
    except ImportError:
        print(
            f"asc-tui serve: needs textual-serve; install it with: {install_hint('serve')}",
            file=sys.stderr,
        )
        return 2
    host = args.host if args.host is not None else DEFAULT_HOST
    if not is_loopback(host):
        print(
            f"asc-tui serve: WARNING: binding {host}, not loopback: anyone who can reach port "
            f"{args.port} gets a workbench that runs code as you. Prefer the default and an SSH "
            "port forward.",
            file=sys.stderr,
        )
    url = f"http://{'localhost' if is_loopback(host) else host}:{args.port}"
    print(f"asc-tui serve: {url}", flush=True)
    if is_loopback(host):
        print(
            f"  from your machine: ssh -L {args.port}:127.0.0.1:{args.port} <this host>, then open {url}",
            flush=True,
        )
    server = WorkbenchServer(
        workbench_command(args), host=host, port=args.port, title="asc-tui", public_url=url
    )
    server.serve()
    return 0
