"""Command line: `asc-tui <command>`; `asc-profile`, `asc-debug`, `asc-bench` are aliases.

Each command lives in its own module exposing `add_parser(subparsers)` and `main(args) -> int`.
"""

from __future__ import annotations

import argparse
import importlib
import sys

COMMANDS = (
    "run",
    "profile",
    "debug",
    "bench",
    "tune",
    "watch",
    "chips",
    "serve",
    "calibrate",
    "conformance",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="asc-tui",
        description="Workbench for Ascend C operators on an emulated NPU. "
        "Without a command: open the workbench on PATH (default ./operators).",
    )
    _add_version(parser)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(f"asc_tui.cli.{name}_cmd").add_parser(sub)
    for command in sub.choices.values():  # `asc-profile --version` is `asc-tui profile --version`
        _add_version(command)
    return parser


def version_text() -> str:
    """What `--version` prints: a version mismatch with the toolkit is the first trap, so the
    Ascend C API level the twin follows and the chip a run gets by default come with it."""
    from .. import ASCENDC_API, __version__
    from ..devkit.chips import default_chip_name

    return f"asc-tui {__version__}\nAscend C API: {ASCENDC_API}\ndefault chip: {default_chip_name()}\n"


class _Version(argparse.Action):
    """argparse's own version action reflows its text onto one line; this prints it as is."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings, dest, nargs=0, default=default, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        sys.stdout.write(version_text())
        parser.exit()


def _add_version(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--version", action=_Version, help="asc-tui's version, the Ascend C API level and the default chip"
    )


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if (
        not argv
        or (argv[0] not in COMMANDS and not argv[0].startswith("-"))
        or argv[0] in ("--theme", "--chip", "--no-watch")
    ):
        return _workbench(argv)
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        return _workbench([])
    mod = importlib.import_module(f"asc_tui.cli.{args.command}_cmd")
    _exit_cleanly_on_sigterm()
    try:
        if getattr(args, "json", False) and args.command in ONE_DOCUMENT:
            from .common import one_document

            return one_document(f"asc-tui {args.command}", lambda: mod.main(args))
        code = int(mod.main(args) or 0)
        sys.stdout.flush()
        return code
    except BrokenPipeError:
        return _reader_left()


#: The commands whose `--json` is one document (`watch --json` streams one object a line).
ONE_DOCUMENT = frozenset(COMMANDS) - {"watch", "serve"}


def _reader_left() -> int:
    """`asc-tui ... | head`: the reader closed the pipe. End quietly (no traceback, and none
    from the interpreter's last flush either), with the status of a process killed by SIGPIPE."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    return 141


def _exit_cleanly_on_sigterm() -> None:
    """SIGTERM (a CI timeout, `kill`, systemd) unwinds like ctrl+c would: `finally` blocks stop
    the worker processes and remove their `asc-tui-worker-*` temp folders. Exit status 143."""
    import signal

    def stop(signum, frame):
        raise SystemExit(128 + signum)

    try:
        signal.signal(signal.SIGTERM, stop)
    except ValueError:  # not the main thread (an embedding caller): leave its handlers alone
        pass


def _workbench(argv: list[str]) -> int:
    tui = importlib.import_module("asc_tui.tui.main")
    return int(tui.main(argv) or 0)


def _alias(command: str):
    def entry(argv: list[str] | None = None) -> int:
        argv = list(sys.argv[1:] if argv is None else argv)
        return main([command, *argv])

    return entry


profile_main = _alias("profile")
debug_main = _alias("debug")
bench_main = _alias("bench")


def run_entry() -> None:  # pragma: no cover - console script shim
    sys.exit(main())
