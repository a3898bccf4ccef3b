"""`asc-tui debug OP` (alias `asc-debug`): sanitizer tools, precision check, deadlock check.

Exit status: 0 when nothing is reported, 1 when any tool reports, an error stops the run, the
precision check is not PASS or the ranks deadlock; 2 for bad arguments.
"""

from __future__ import annotations

import sys

from ..devkit.debug import DebugReport, DebugRequest, debug
from ..devkit.loader import list_operators
from ..devkit.sanitizer import TOOLS
from .common import add_target_options, parse_params, print_json


def add_parser(sub) -> None:
    p = sub.add_parser(
        "debug", help="find memory, race, init and sync bugs; check precision and multi-rank deadlocks"
    )
    add_target_options(p, op_optional=True, timeout=30.0, runaway="a runaway kernel or rank")
    p.add_argument(
        "--tool",
        default=",".join(TOOLS),
        help=f"comma-separated sanitizer tools (default: all of {','.join(TOOLS)}; 'none' for no sanitizer)",
    )
    p.add_argument(
        "--precision-check",
        action="store_true",
        help="compare with the golden reference: errors, cosine, NaN/Inf, worst "
        "elements; anything but PASS is reported",
    )
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
    params = parse_params(args.param)
    targets = args.op or [str(p) for p in list_operators()]
    reports = []
    for op in targets:
        req = DebugRequest(
            op,
            args.case,
            args.chip,
            params,
            tools,
            args.precision_check,
            args.deadlock_check or args.ranks is not None,
            args.ranks,
            args.timeout,
            args.seed,
        )
        rep = debug(req)
        reports.append(rep)
        if not args.json:
            print_report(rep)
    if args.json:
        print_json(reports[0].to_dict() if len(reports) == 1 else [r.to_dict() for r in reports])
    return 0 if all(r.clean for r in reports) else 1


def print_report(r: DebugReport, out=None) -> None:
    out = out or sys.stdout
    w = out.write
    tools = ", ".join(r.tools) or "no sanitizer"
    chip = r.run.chip if r.run is not None else None
    case = r.case or (r.deadlock.case if r.deadlock is not None else None)
    w(f"asc-debug {r.operator} [{case}]" + (f" on {chip}" if chip else "") + f" — {tools}\n")
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
    verdict = "clean" if r.clean else "PROBLEMS FOUND"
    extra = ""
    if r.errors:
        extra += f", {len(r.errors)} error(s)"
    if r.precision_checked:
        extra += f", precision {r.precision.verdict if r.precision else 'not checked'}"
    if r.deadlock is not None:
        extra += f", ranks {r.deadlock.outcome}"
    w(
        f"  {verdict}: {len(r.findings)} report(s)"
        + (f" ({summary})" if summary else "")
        + extra
        + f"  [{r.seconds:.2f} s]\n\n"
    )


def _print_precision(r: DebugReport, w) -> None:
    if r.precision is None:
        w("  precision: not checked (the run did not finish)\n")
        return
    for o in r.precision.outputs:
        w(
            f"  precision {o.name} ({o.dtype}): {o.verdict}  max abs err {o.max_abs_error:.4g}"
            f" (atol {o.atol:g}, rtol {o.rtol:g}), mean rel err {o.mean_rel_error:.4g}, "
            f"cosine {o.cosine_similarity:.6f}, NaN {o.nan}, Inf {o.inf}\n"
        )
        for i, got, want in o.worst:
            w(f"      [{i}] got {got:.6g} want {want:.6g}\n")
