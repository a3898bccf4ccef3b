"""`asc-tui conformance PATH`: one row per sample directory under PATH: status, reason, time."""

from __future__ import annotations

import sys

from ..config import DEFAULT_WORKER_TIMEOUT
from ..devkit.conformance import conformance, counts, to_json, to_markdown
from .common import print_json


def add_parser(sub) -> None:
    p = sub.add_parser("conformance", help="run every sample directory under PATH and report how each fared")
    p.add_argument("path", help="a directory of samples (asc-devkit examples style)")
    p.add_argument("--json", action="store_true", help="print the rows as JSON")
    p.add_argument("--markdown", action="store_true", help="print the rows as a Markdown table")
    p.add_argument("--jobs", type=int, default=2, help="samples run at a time (worker processes)")
    p.add_argument("--timeout", type=float, default=DEFAULT_WORKER_TIMEOUT, help="seconds per sample")
    p.add_argument("--chip", default=None, help="run every sample on this chip (default: from CMakeLists)")


def main(args) -> int:
    live = not (args.json or args.markdown)

    def on_row(r):
        if live:
            print(f"{r.status:<13} {r.seconds:6.2f}s  {r.sample}  {r.reason}", flush=True)

    rows = conformance(args.path, args.timeout, None, args.jobs, args.chip, on_row)
    if args.json:
        print_json(to_json(rows))
    elif args.markdown:
        print(to_markdown(rows))
    else:
        c = counts(rows)
        sys.stdout.write(", ".join(f"{k}: {v}" for k, v in c.items()) + f" (of {len(rows)})\n")
    return 0 if all(r.status in ("PASS", "RAN", "OUT OF SCOPE") for r in rows) else 1
