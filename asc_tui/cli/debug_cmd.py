"""`asc-tui debug OP` (alias `asc-debug`): sanitizer tools, precision check, deadlock check.

As in the asc-devkit workflow, plain `asc-debug OP` runs every sanitizer tool and the precision
check. The verdict and the exit status are `devkit.outcome`'s: 0 for PASS (or RAN: nothing was
checked), 1 for WARN, FAIL or ERROR (a finding, an error, precision not PASS, ranks that
deadlock); 2 for bad arguments.
"""

from __future__ import annotations

import argparse
import os
import sys

from ..devkit.debug.debugger import DebugReport, DebugRequest
from ..devkit.debug.sanitizer import TOOLS
from ..devkit.errors import BuildError
from ..devkit.isolated import debug_isolated
from ..devkit.outcome import Verdict
from ..devkit.present.report_lines import origin_line, output_lines, overwrite_lines, plain, verify_lines
from ..devkit.run.loader import resolve_operator
from .common import add_target_options, show_results, targets

#: Findings that explain a wrong result: shown again under a precision check that did not pass.
RELATED_KINDS = ("uninitialized", "input-overwrite")


def add_parser(sub) -> None:
    p = sub.add_parser(
        "debug", help="find memory, race, init and sync bugs; check precision and multi-rank deadlocks"
    )
    add_target_options(p, op_optional=True, runaway="a runaway kernel or rank")
    p.add_argument(
        "--tool",
        default=",".join(TOOLS),
        help=f"comma-separated sanitizer tools (default: all of {','.join(TOOLS)}; 'none' for no sanitizer)",
    )
    p.add_argument(
        "--no-precision",
        action="store_true",
        help="skip the precision check (on by default: errors, cosine, NaN/Inf and where the first "
        "one came from, worst elements against the golden reference; anything but PASS is reported)",
    )
    p.add_argument("--precision-check", action="store_true", help=argparse.SUPPRESS)  # (the old opt-in)
    p.add_argument(
        "--deadlock-check",
        action="store_true",
        help="run --ranks ranks together and report collectives that never complete",
    )
    p.add_argument(
        "--ranks",
        type=int,
        default=None,
        help="ranks for --deadlock-check, which it implies (default: the operator's RANKS, else 2)",
    )
    p.add_argument("--seed", type=int, default=0, help="input data seed")


def _tools(text: str) -> tuple[str, ...]:
    if text.strip().lower() in ("", "none"):
        return ()
    tools = tuple(t.strip() for t in text.split(",") if t.strip())
    bad = [t for t in tools if t not in TOOLS]
    if bad:
        raise SystemExit(f"asc-tui debug: unknown tool(s) {', '.join(bad)}; choose from {', '.join(TOOLS)}")
    return tools


def main(args) -> int:
    tools = _tools(args.tool)
    if args.ranks is not None and args.ranks < 1:
        print("asc-tui debug: --ranks must be at least 1", file=sys.stderr)
        return 2
    t = targets(args, "asc-tui debug")
    if isinstance(t, int):
        return t
    root = t.root
    deadlock = args.deadlock_check or args.ranks is not None
    # With --deadlock-check the ranks' results are the precision check (golden_ranks): one rank
    # alone completes its collectives at once, so its outputs are not the golden's.
    precision = not args.no_precision and not deadlock
    requests = [
        DebugRequest(
            str(resolve_operator(op, root)) if _exists(op, root) else op,
            args.case,
            args.chip,
            t.params,
            tools,
            precision,
            deadlock,
            args.ranks,
            args.timeout,
            args.seed,
        )
        for op in t.ops
    ]
    results = debug_isolated(requests, args.timeout, t.config.worker_memory_mb)
    reports = show_results(args, results, print_report)
    return max((r.verdict.exit_code for r in reports), default=0)


def _exists(op: str, root) -> bool:
    try:
        resolve_operator(op, root)
    except BuildError:
        return False
    return True


def print_report(r: DebugReport, out=None) -> None:
    out = out or sys.stdout
    w = out.write
    tools = ", ".join(r.tools) or "no sanitizer"
    if r.precision_checked:
        tools += ", precision"
    chip = r.run.chip if r.run is not None else None
    case = r.case or (r.deadlock.case if r.deadlock is not None else None)
    label = f"{r.operator} [{case}]" if case else r.operator  # no case yet: the build failed
    w(f"asc-debug {label}" + (f" on {chip}" if chip else "") + f" — {tools}\n")
    for f in r.findings:
        w("  " + f.format().replace("\n", "\n  ") + "\n")
    for e in r.errors:
        w("  error: " + e.format().replace("\n", "\n  ") + "\n")
    if r.precision_checked:
        _print_precision(r, w)
    if r.deadlock is not None:
        w("  " + r.deadlock.format().replace("\n", "\n  ") + "\n")
        if r.deadlock.precision is not None:
            w(f"  ranks' results: {r.deadlock.precision.verdict}\n")
    counts = {}
    for f in r.findings:
        counts[f.tool] = counts.get(f.tool, 0) + 1
    summary = ", ".join(f"{k} {v}" for k, v in counts.items())
    extra = ""
    if r.errors:
        extra += f", {len(r.errors)} error(s)"
    if r.precision_checked:
        if r.precision is None and r.run is not None and r.run.sample is not None:
            extra += f", precision: {_sample_check(r)}"
        else:
            extra += f", precision {r.precision.verdict if r.precision else 'not checked'}"
    if r.deadlock is not None:
        extra += f", ranks {r.deadlock.outcome}"
    w(
        f"  {r.verdict}: {len(r.findings)} report(s)"
        + (f" ({summary})" if summary else "")
        + extra
        + f"  [{r.seconds:.2f} s]\n\n"
    )


def _print_precision(r: DebugReport, w) -> None:
    sample = r.run.sample if r.run is not None else None
    if r.precision is None and sample is not None:
        w(f"  precision: {_sample_check(r)}\n")
        w(plain(verify_lines(sample)))
        return
    if r.precision is None:
        w("  precision: not checked (the run did not finish)\n")
        return
    w(plain(ln for o in r.precision.outputs for ln in output_lines(o)))
    w(plain(overwrite_lines(r.precision)))
    if sample is not None:  # (a sample's own check after the precision line: its verify output, once)
        w(plain(verify_lines(sample)))
    if r.precision.verdict != "PASS":
        related = [f for f in r.findings if f.kind in RELATED_KINDS]
        for f in related:
            w(f"      related: {f.title} at {os.path.basename(f.file or '?')}:{f.line} ({f.tool})\n")
    if r.nonfinite is not None:
        w(plain([origin_line(r.nonfinite)]))


def _sample_check(r: DebugReport) -> str:
    """What checked a sample's output when there was no golden.bin to compare with: its verify
    script, main() itself (its output says pass), or nothing."""
    sample = r.run.sample
    v = sample.verify
    if v is not None:
        return f"verify_result.py exit {v.get('exit')}"
    if r.run.verdict is Verdict.PASS:
        return "main() checked its own output: PASS"
    return str(sample.precision or "not checked")
