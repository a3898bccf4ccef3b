"""`asc-tui bench OP` (alias `asc-bench`): figures per case, baseline verdicts, regressions vs the
previous run, history trend and Markdown/HTML reports. Exit 1 on a fail-on condition (CI)."""

from __future__ import annotations

import sys
from pathlib import Path

from ..config import ConfigError, default_memory_mb, load_config
from ..devkit.bench import history
from ..devkit.bench.diff import diff_lines
from ..devkit.bench.figures import history_name
from ..devkit.bench.results import FAIL_CONDITIONS, BenchRequest, BenchResult, Thresholds
from ..devkit.chips import load_chip
from ..devkit.errors import OperatorError
from ..devkit.isolated import bench_isolated
from ..devkit.present.bench import bench_table_text, history_rows
from ..devkit.present.report import render
from ..devkit.store import Store
from ..devkit.text import sparkline
from .common import (
    add_emulation_options,
    add_target_options,
    config_failure,
    fail,
    parse_params,
    print_json,
    print_output,
)


def add_parser(sub) -> None:
    p = sub.add_parser("bench", help="benchmark an operator against a baseline and its history")
    add_target_options(p)
    p.add_argument("--all-cases", action="store_true", help="bench every case of the operator")
    base = p.add_mutually_exclusive_group()
    base.add_argument(
        "--baseline",
        metavar="OP2",
        help="run operator OP2 on the same cases as the baseline (default: the "
        "operator's BASELINE, if it declares one)",
    )
    base.add_argument("--against", metavar="NAME", help="compare with the saved baseline NAME")
    p.add_argument("--save-baseline", metavar="NAME", help="save this run's results as baseline NAME")
    p.add_argument(
        "--report",
        nargs="+",
        metavar="FORMAT [FILE]",
        help="write a report: markdown or html (to --output FILE, or FILE)",
    )
    p.add_argument("--output", "-o", metavar="FILE", help="report file (default: stdout)")
    p.add_argument(
        "--history",
        action="store_true",
        help="show the recorded trend of this operator instead of running it",
    )
    p.add_argument("--baselines", action="store_true", help="list saved baselines and exit")
    p.add_argument("--limit", type=int, default=20, help="runs shown by --history (default 20)")
    p.add_argument(
        "--ship",
        type=float,
        metavar="PCT",
        help="relative performance to ship (default 95, or [thresholds] ship in the project config)",
    )
    p.add_argument(
        "--optimise", type=float, metavar="PCT", help="below this it is 'must optimise' (default 90)"
    )
    p.add_argument(
        "--regression-threshold",
        type=float,
        metavar="PCT",
        help="slowdown vs the previous run that counts as a regression (default 1)",
    )
    p.add_argument(
        "--fail-on",
        default="regression,must-optimise,error",
        metavar="LIST",
        help=f"exit 1 when any holds: {','.join(FAIL_CONDITIONS)} or none "
        "(default regression,must-optimise,error)",
    )
    add_emulation_options(p, timing_only=True)
    p.add_argument("--no-record", action="store_true", help="do not add this run to history")


def _thresholds(args, cfg) -> Thresholds:
    """Flags (percent) over the project config's [thresholds] (fractions) over the defaults;
    ValueError for values out of range."""
    fail_on = tuple(x.strip() for x in args.fail_on.split(",") if x.strip() and x != "none")
    ship, optimise, regression = cfg.ship, cfg.optimise, cfg.regression
    return Thresholds(
        ship=args.ship / 100 if args.ship is not None else ship,
        optimise=args.optimise / 100 if args.optimise is not None else optimise,
        regression=(args.regression_threshold / 100 if args.regression_threshold is not None else regression),
        fail_on=fail_on,
    )


def _report_target(args) -> tuple[str, str | None] | None:
    """(format, file or None for stdout), or None without --report; ValueError when misused."""
    if not args.report:
        return None
    fmt = args.report[0].lower()
    fmt = {"md": "markdown", "htm": "html"}.get(fmt, fmt)
    if fmt not in ("markdown", "html") or len(args.report) > 2:
        raise ValueError("--report takes markdown|html and optionally a FILE")
    out = args.output or (args.report[1] if len(args.report) == 2 else None)
    if out is None and args.json:
        raise ValueError("--report with --json needs --output FILE")
    return fmt, out


def main(args) -> int:
    try:
        cfg = load_config()
    except ConfigError as exc:
        return config_failure(args, exc, "asc-tui bench")
    try:
        th = _thresholds(args, cfg.thresholds)
        target = _report_target(args)
    except ValueError as exc:
        return fail(args, "asc-tui bench", str(exc))
    store = Store()
    for notice in store.notices:
        print(f"asc-tui: {notice}", file=sys.stderr)
    if args.baselines:
        return _list_baselines(store, args)
    if args.history:
        return _history(store, args, th)
    req = BenchRequest(
        args.op,
        cases=() if args.all_cases else ((args.case,) if args.case else None),
        chip=args.chip,
        params=parse_params(args.param),
        baseline_op=args.baseline,
        against=args.against,
        save_baseline=args.save_baseline,
        thresholds=th,
        timing_only=args.timing_only,
        record=not args.no_record,
        timeout_s=args.timeout,
    )
    iso = bench_isolated(req, default_memory_mb())  # user code runs in a worker process
    result = iso.report
    print_output(iso.stdout, sys.stderr if args.json else sys.stdout)
    trends = {
        c.case: history.runs(
            store, result.operator, c.case, result.chip, history.TREND_KINDS, limit=args.limit
        )
        for c in result.cases
    }
    if target is not None:
        fmt, out = target
        text = render(result, trends, fmt)
        if out is None:
            sys.stdout.write(text)
        else:
            Path(out).write_text(text, encoding="utf-8")
            if not args.json:
                print(f"{fmt} report written to {out}")
    if args.json:
        print_json({**result.to_dict(), "exit": iso.exit.to_dict(), "stdout": iso.stdout})
    elif target is None or target[1] is not None:
        print_result(result)
    return max(result.exit_code, 0 if iso.exit.status == "ok" else 1)


def print_result(r: BenchResult, out=None) -> None:
    w = (out or sys.stdout).write
    w(bench_table_text(r))
    for c in r.cases:
        if c.diff is not None:
            w(f"[{c.case}] " + "\n".join(diff_lines(c.diff)) + "\n")


def _history(store: Store, args, th: Thresholds) -> int:
    try:
        chip = load_chip(args.chip).name
    except OperatorError as exc:
        print(exc.info().format(), file=sys.stderr)
        return 1
    op = history_name(args.op)
    recs = history.runs(
        store, op, None if args.all_cases else args.case, chip, history.TREND_KINDS, limit=None
    )
    by_case: dict[str, list] = {}
    for r in recs:
        if r.time_us is not None:
            by_case.setdefault(r.case, []).append(r)
    if args.json:
        print_json(
            {
                "operator": op,
                "chip": chip,
                "cases": {k: [r.to_dict() for r in v[-args.limit :]] for k, v in by_case.items()},
            }
        )
        return 0
    if not by_case:
        print(f"no recorded runs of {op} on {chip} in {store.path}")
        return 0
    for case, rs in by_case.items():
        rs = rs[-args.limit :]
        times = [r.time_us for r in rs]
        print(
            f"{op} [{case}] on {chip}: {len(rs)} runs  {sparkline(times)}  "
            f"{times[0]:.3f} -> {times[-1]:.3f} us"
        )
        for row in history_rows(rs, th.regression):
            print(f"  {row[0]:>6}  {row[1]}  {row[2]:<8}{row[3]:<18}{row[4]:>12}  {row[5]}")
    return 0


def _list_baselines(store: Store, args) -> int:
    rows = history.baselines(
        store,
        None if args.op in ("", "all") else history_name(args.op),
    )
    if args.json:
        print_json(rows)
        return 0
    if not rows:
        print("no saved baselines")
    for b in rows:
        print(
            f"  {b['name']:<16}{b['operator']:<20}{b['case']:<16}{b['chip']:<14}"
            f"{b['time_us']:>12.3f} us  {b['source_hash']}"
        )
    return 0
