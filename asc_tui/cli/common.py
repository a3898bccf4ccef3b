"""Options shared by the commands and small output helpers."""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config import DEFAULT_WORKER_TIMEOUT, resolve_timeout
from ..devkit.errors import ErrorInfo


class ConfigDefault(float):
    """A flag's default that the project config may replace (`apply_config`); a plain float to
    commands that do not read the config."""


def add_target_options(
    p: argparse.ArgumentParser,
    op_optional: bool = False,
    runaway: str = "a runaway kernel",
) -> None:
    """OP (or OPs, default all), --case, --chip, --param, --json and --timeout (seconds)."""
    if op_optional:
        p.add_argument(
            "op",
            nargs="*",
            metavar="OP",
            help="operator name (bundled or in ./operators) or path; default: all",
        )
    else:
        p.add_argument("op", metavar="OP", help="operator name (bundled or in ./operators) or path")
    p.add_argument("--case", help="case name (default: the operator's default case)")
    p.add_argument("--chip", help="chip name (ascend910b, ascend910b4, ...) or path to a .toml")
    p.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a tunable parameter (repeatable)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument(
        "--timeout",
        type=float,
        default=ConfigDefault(DEFAULT_WORKER_TIMEOUT),
        help=f"seconds before {runaway} is stopped (default: the config's worker_timeout, "
        f"{DEFAULT_WORKER_TIMEOUT:g})",
    )


def add_emulation_options(p: argparse.ArgumentParser, timing_only: bool) -> None:
    """`--timing-only` / `--full` on every command that emulates; `timing_only` is its default."""
    g = p.add_mutually_exclusive_group()
    g.add_argument(
        "--timing-only",
        dest="timing_only",
        action="store_true",
        default=timing_only,
        help="timing-only emulation: shadow tensors, no arithmetic, no precision check; the same "
        "timeline, much faster" + (" (default)" if timing_only else ""),
    )
    g.add_argument(
        "--full",
        dest="timing_only",
        action="store_false",
        help="full emulation: numeric + timing, with the precision check"
        + ("" if timing_only else " (default)"),
    )


def apply_config(args):
    """Read the project config (asc-tui.toml or [tool.asc-tui], found from the current directory)
    and fill what the command line left open: chip, case, timeout. Raises `ConfigError`."""
    from ..config import load_config

    config = load_config()
    for key in ("chip", "case"):
        if getattr(args, key, None) is None and getattr(config, key):
            setattr(args, key, getattr(config, key))
    asked = getattr(args, "timeout", None)
    args.timeout = resolve_timeout(None if isinstance(asked, ConfigDefault) else asked, config)
    return config


@dataclass(frozen=True)
class Targets:
    """What a command that runs operators works on, after the project config is applied."""

    config: Any  # asc_tui.config.Config
    params: dict[str, str]  # --param overrides
    root: Path | None  # the config's operators directory, if it names one
    ops: list[str]  # the operators named on the command line, else every one found


def targets(args, prog: str) -> Targets | int:
    """Apply the project config to `args` and list the operators to run; a config error is
    reported (`config_failure`) and its exit status returned instead."""
    from ..config import ConfigError, resolve_operators_dir
    from ..devkit.run.loader import list_operators

    try:
        config = apply_config(args)
    except ConfigError as exc:
        return config_failure(args, exc, prog)
    root = resolve_operators_dir(None, config) if config.operators else None
    ops = args.op or [str(p) for p in list_operators(root)]
    return Targets(config, parse_params(args.param), root, ops)


def config_failure(args, exc, prog: str) -> int:
    """A config mistake: every problem with file:line:col, as JSON or on stderr; exit 2."""
    if getattr(args, "json", False):
        print_json(
            {
                "errors": [
                    {
                        "kind": "config",
                        "message": p.message,
                        "file": p.file,
                        "line": p.line,
                        "column": p.column,
                    }
                    for p in exc.problems
                ],
                "passed": False,
            }
        )
    else:
        print(f"{prog}: config error:\n{exc}", file=sys.stderr)
    return 2


def fail(args, prog: str, message: str, info: dict | None = None, code: int = 2) -> int:
    """A command that cannot give its result: the error as the `--json` document (`info`, an
    error object, else a "usage" one), or `prog: message` on stderr. Returns `code`."""
    if getattr(args, "json", False):
        print_json({"errors": [info or error_object("usage", message)], "passed": False})
    else:
        print(f"{prog}: {message}", file=sys.stderr)
    return code


def print_output(text: str, out=None) -> None:
    """What the operator printed, set apart from our own report (human output only)."""
    if text:
        out = out or sys.stdout
        out.write("  operator output:\n")
        for line in text.rstrip("\n").splitlines():
            out.write(f"  | {line}\n")


def show_results(args, results, print_report, record=None) -> list:
    """Each isolated result as it comes: `record(report)` first, then its report and output, or
    with --json all of them at the end (one object for one operator). Returns the reports."""
    docs, reports = [], []
    for res in results:
        if record is not None:
            record(res.report)
        reports.append(res.report)
        docs.append(res.to_dict())
        if not args.json:
            print_report(res.report)
            print_output(res.stdout)
    if args.json:
        print_json(docs[0] if len(docs) == 1 else docs)
    return reports


def parse_params(items: list[str]) -> dict[str, str]:
    out = {}
    for item in items:
        if "=" not in item:
            raise SystemExit(f"--param expects KEY=VALUE, got {item!r}")
        k, v = item.split("=", 1)
        out[k.strip()] = v.strip()
    return out


def print_json(obj: Any) -> None:
    """Print the command's JSON document: on the real stdout kept by `one_document`, or on
    sys.stdout outside it (`chips`, a caller embedding a command)."""
    out = _Document.stream
    if out is None:
        json.dump(obj, sys.stdout, indent=2, default=_default)
        sys.stdout.write("\n")
        return
    if _Document.written:
        raise RuntimeError("a --json command prints one document; this is its second")
    _Document.written = True
    json.dump(obj, out, indent=2, default=_default)
    out.write("\n")
    out.flush()


def error_object(kind: str, message: str, file=None, line=None, column=None, hint=None) -> dict:
    """An error of the `errors` list (the shape of `ErrorInfo.to_dict()`): every error object
    has `file`, `line` and `column`, null when unknown."""
    return ErrorInfo(kind, message, file, line, hint, None, column).to_dict()


class _Document:
    """Where the one JSON document of a `--json` run goes, while `one_document` runs it."""

    stream = None  # the real stdout, a text stream on a duplicate of fd 1
    written = False


def one_document(prog: str, run) -> int:
    """Run `run()` (a command's `main`) so that stdout carries exactly one JSON document,
    whatever the command's user code prints or does.

    For the run, `sys.stdout` is stderr and so is file descriptor 1 (when stdout is a real
    file): an operator that prints at import, in this process or in a process it starts,
    writes to stderr. The document goes to the stdout the command was started with. A command
    that ends without one (an early `return`, `SystemExit("...")`, an exception) still answers
    with an `errors` document."""
    entry = sys.stdout
    entry.flush()
    doc, moved = entry, None
    try:
        fd, err_fd = entry.fileno(), sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):  # a captured stream: swapping sys.stdout is enough
        fd = err_fd = None
    if fd is not None:
        moved = (fd, os.dup(fd))
        doc = os.fdopen(os.dup(fd), "w", encoding=getattr(entry, "encoding", None) or "utf-8")
        os.dup2(err_fd, fd)
    sys.stdout = sys.stderr
    _Document.stream, _Document.written = doc, False
    try:
        try:
            code = int(run() or 0)
        except SystemExit as exc:
            if not _Document.written:
                text = exc.code if isinstance(exc.code, str) else f"{prog} stopped (exit {exc.code})"
                print_json({"errors": [error_object("usage", text)], "passed": False})
            raise
        except BrokenPipeError:
            raise
        except BaseException as exc:
            if not _Document.written:
                what = "interrupted" if isinstance(exc, KeyboardInterrupt) else "internal error in asc-tui"
                message = f"{what}: {type(exc).__name__}" + (f": {exc}" if str(exc) else "")
                print_json({"errors": [error_object("internal", message)], "passed": False})
            raise
        if not _Document.written:
            message = f"{prog} ended (exit {code}) without a result; see stderr"
            print_json({"errors": [error_object("usage", message)], "passed": False})
        return code
    finally:
        _Document.stream = None
        sys.stdout.flush()
        sys.stdout = entry
        if moved is not None:
            fd, saved = moved
            os.dup2(saved, fd)
            os.close(saved)
            doc.close()


def _default(o):
    import numpy as np

    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    return str(o)
