"""`asc-tui conformance PATH`: one row per sample directory under PATH: status, reason, time."""

from __future__ import annotations

import sys

from ..config import DEFAULT_WORKER_TIMEOUT
from ..devkit.conformance import (
    conformance,
    counts,
    exit_code,
    nothing_to_run,
    rate_line,
    read_scope,
    to_json,
    to_markdown,
)
from .common import fail, print_json

PROG = "asc-tui conformance"


def add_parser(sub) -> None:
    p = sub.add_parser("conformance", help="run every sample directory under PATH and report how each fared")
    p.add_argument("path", help="a directory of samples (asc-devkit examples style)")
    p.add_argument("--json", action="store_true", help="print the rows as JSON")
    p.add_argument("--markdown", action="store_true", help="print the rows as a Markdown table")
    p.add_argument("--jobs", type=int, default=2, help="samples run at a time (worker processes)")
    p.add_argument("--timeout", type=float, default=DEFAULT_WORKER_TIMEOUT, help="seconds per sample")
    p.add_argument("--chip", default=None, help="run every sample on this chip (default: from CMakeLists)")
    p.add_argument(
        "--scope",
        metavar="FILE",
        default=None,
        help="run only the samples this file lists (paths relative to PATH, one a line, # comments) "
        "and print the PASS percentage over them, OUT OF SCOPE ones not counted",
    )


def main(args) -> int:
    live = not (args.json or args.markdown)

    def on_row(r):
        if live:
            print(f"{r.status:<13} {r.seconds:6.2f}s  {r.sample}  {r.reason}", flush=True)

    scope = None
    if args.scope is not None:
        try:
            scope = read_scope(args.scope)
        except OSError as exc:
            return fail(args, PROG, f"cannot read the scope file {args.scope}: {exc.strerror}")
    nothing = nothing_to_run(args.path)
    if nothing is not None:
        return fail(args, PROG, nothing)
    rows = conformance(args.path, args.timeout, None, args.jobs, args.chip, on_row, scope)
    if args.json:
        print_json(to_json(rows, scoped=scope is not None))
    elif args.markdown:
        print(to_markdown(rows))
        if scope is not None:
            print("\n" + rate_line(rows))
    else:
        c = counts(rows)
        sys.stdout.write(", ".join(f"{k}: {v}" for k, v in c.items()) + f" (of {len(rows)})\n")
        if scope is not None:
            sys.stdout.write(rate_line(rows) + "\n")
    return exit_code(rows)
