"""Options shared by the commands and small output helpers."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any


def add_target_options(
    p: argparse.ArgumentParser,
    op_optional: bool = False,
    timeout: float = 60.0,
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
        default=timeout,
        help=f"seconds before {runaway} is stopped (default {timeout:g})",
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


def parse_params(items: list[str]) -> dict[str, str]:
    out = {}
    for item in items:
        if "=" not in item:
            raise SystemExit(f"--param expects KEY=VALUE, got {item!r}")
        k, v = item.split("=", 1)
        out[k.strip()] = v.strip()
    return out


def print_json(obj: Any) -> None:
    json.dump(obj, sys.stdout, indent=2, default=_default)
    sys.stdout.write("\n")


def _default(o):
    import numpy as np

    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    return str(o)
