"""`asc-tui tune OP`: search the operator's tiling parameters on the emulated NPU.

Also behind `asc-profile --auto-tune OP` (exhaustive) and `asc-profile --quick-tune OP`
(model-guided, at most 10 evaluations) through `tune_from_profile_args`.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections import Counter
from pathlib import Path

from .. import install_hint
from ..devkit.errors import OperatorError
from ..devkit.text import params_text, size_in
from ..devkit.tune import STRATEGIES, CancelToken, TuneEvent, TuneReport, TuneRequest, tune
from ..devkit.tune.apply import plan_apply
from .common import add_target_options, config_failure, fail, parse_params, print_json

QUICK_BUDGET = 10


def add_parser(sub) -> None:
    p = sub.add_parser(
        "tune",
        help="auto-tune an operator's tiling parameters (cached, parallel)",
        description="Search the PARAMS of an operator in timing-only emulation. "
        "Invalid configs are pruned before emulation; every result is cached in "
        "the project store, so re-runs are instant and a killed tune resumes.",
    )
    add_target_options(p)
    add_tune_options(p)


def add_tune_options(p) -> None:
    p.add_argument(
        "--strategy",
        default="exhaustive",
        choices=sorted(STRATEGIES),
        help="search strategy (default exhaustive; quick = model-guided, 10 evals)",
    )
    p.add_argument("--budget", type=int, default=None, help="most configs to consider (evaluated + cached)")
    p.add_argument(
        "--workers",
        type=int,
        default=None,
        help="worker processes (default: one per CPU; 0 = in this process)",
    )
    p.add_argument(
        "--objective",
        default="time",
        choices=("time", "gflops"),
        help="minimise simulated time (default) or maximise GFLOPS",
    )
    p.add_argument(
        "--apply",
        action="store_true",
        help="write the best params into the operator's PARAMS (diff shown first)",
    )
    p.add_argument("--yes", action="store_true", help="with --apply: do not ask")
    p.add_argument(
        "--fresh", action="store_true", help="forget cached results of this operator/case/chip first"
    )
    p.add_argument("--seed", type=int, default=0, help="seed of random/anneal/genetic")
    p.add_argument("--top", type=int, default=10, help="rows of the result table (default 10)")
    p.add_argument(
        "--backend",
        default="local",
        choices=("local", "ray"),
        help=f"where evaluations run (ray: {install_hint('ray')})",
    )
    p.add_argument("--address", default=None, help="Ray cluster address (with --backend ray)")
    p.add_argument(
        "--param-values",
        action="append",
        default=[],
        metavar="NAME=a,b,c",
        help="values to sweep for a constant of a sample directory (repeatable)",
    )


def main(args) -> int:
    return run_tune(args, getattr(args, "strategy", "exhaustive"), getattr(args, "budget", None))


def tune_from_profile_args(args, quick: bool) -> int:
    """`asc-profile --auto-tune OP` / `--quick-tune OP`; args has .op .case .chip .param .json."""
    strategy = "quick" if quick else "exhaustive"
    budget = QUICK_BUDGET if quick else None
    return run_tune(args, strategy, budget)


def run_tune(args, strategy: str, budget: int | None) -> int:
    fixed = parse_params(getattr(args, "param", []) or [])
    op = args.op[0] if isinstance(args.op, list) else args.op
    if is_sample_target(op):
        return tune_sample(args, op, fixed)
    req = TuneRequest(
        op,
        case=args.case,
        chip=args.chip,
        strategy=strategy,
        budget=budget,
        workers=getattr(args, "workers", None),
        objective=getattr(args, "objective", "time"),
        fixed=fixed,
        seed=getattr(args, "seed", 0),
        timeout_s=getattr(args, "timeout", 60.0),
        fresh=getattr(args, "fresh", False),
        backend=getattr(args, "backend", "local"),
        address=getattr(args, "address", None),
    )
    cancel = CancelToken()
    listeners = [] if args.json or not sys.stderr.isatty() else [_progress_line]
    old = _install_sigint(cancel)
    try:
        report = tune(req, listeners, cancel)
    except OperatorError as exc:
        return fail(args, "asc-tui tune", str(exc), exc.info().to_dict(), code=1)
    except (ValueError, RuntimeError) as exc:
        return fail(args, "asc-tui tune", str(exc))
    finally:
        _restore_sigint(old)
    if listeners:
        sys.stderr.write("\n")
    _record_history(report)
    if args.json:
        print_json(report.to_dict())
    else:
        print_report(report, getattr(args, "top", 10))
    if getattr(args, "apply", False) and report.best is not None and not report.cancelled:
        return _apply(report, args)
    if report.cancelled:
        return 130
    return 0 if report.best is not None else 1


def is_sample_target(op) -> bool:
    from ..devkit.tune.sample_tune import is_sample

    return isinstance(op, str) and os.path.exists(op) and is_sample(op)


def tune_sample(args, op: str, fixed: dict) -> int:
    """A sample directory: sweep the values the user gives (`--param-values NAME=a,b,c`)."""
    from ..config import ConfigError, load_config
    from ..devkit.tune.sample_tune import (
        SIDECAR,
        apply_edits,
        best,
        parse_values,
        sweep,
        tune_report,
        tune_values,
    )

    try:
        given = parse_values(getattr(args, "param_values", []) or [])
        values = tune_values(op, given, load_config().tune)
        if not values:
            raise ValueError(
                "a sample has no declared search space: give --param-values NAME=a,b,c, or a "
                f"[tune] table (NAME = [a, b, c]) in {SIDECAR} next to the sample or in the project config"
            )
        t0 = time.perf_counter()
        rows = sweep(op, values, fixed, args.chip, getattr(args, "timeout", 60.0), None)
        report = tune_report(op, values, rows, args.chip, time.perf_counter() - t0)
    except OperatorError as exc:
        return fail(args, "asc-tui tune", str(exc), exc.info().to_dict(), code=1)
    except ConfigError as exc:
        return config_failure(args, exc, "asc-tui tune")
    except ValueError as exc:
        return fail(args, "asc-tui tune", str(exc))
    top = best(rows)
    if args.json:
        print_json(report.to_dict())  # the operator tune's schema
    else:
        for r in sorted(rows, key=lambda r: (not r.ok, r.time_us or 0.0)):
            p = params_text(r.params)
            print(f"  {p:<40} " + (f"{r.time_us:12.3f} us" if r.ok else f"FAIL  {r.reason}"))
        for note in report.notes:
            print(f"note: {note}")
        print(f"best: {params_text(top.params)}" if top else "no config passed")
    if top is not None and getattr(args, "apply", False):
        for e in apply_edits(op, top.params):
            if not args.json:
                print(e.diff())
            if getattr(args, "yes", False) or input(f"write {e.path}? [y/N] ").strip().lower() == "y":
                Path(e.path).write_text(e.after, encoding="utf-8")
    return 0 if top is not None else 1


def _record_history(report: TuneReport) -> None:
    """Append the best config to the project's run history (kind "tune")."""
    if report.best is None or report.cancelled:
        return
    from ..devkit.bench.history import record_run

    record_run(report, kind="tune")


def _install_sigint(cancel: CancelToken):
    if threading.current_thread() is not threading.main_thread():
        return None

    def handler(signum, frame):
        if cancel.cancelled:
            raise KeyboardInterrupt
        cancel.cancel()

    return signal.signal(signal.SIGINT, handler)


def _restore_sigint(old) -> None:
    if old is not None:
        signal.signal(signal.SIGINT, old)


def _progress_line(ev: TuneEvent) -> None:
    if ev.kind != "result":
        return
    best = f"best {ev.best.time_us:.3f} us" if ev.best is not None and ev.best.ok else "best -"
    eta = f"ETA {ev.eta_s:.1f} s" if ev.eta_s is not None else "ETA -"
    width = 24
    filled = int(width * ev.fraction)
    sys.stderr.write(
        f"\r[{'#' * filled}{'.' * (width - filled)}] {ev.done}/{ev.total} "
        f"({ev.cached} cached)  {best}  {eta}   "
    )
    sys.stderr.flush()


def _fmt_params(params: dict) -> str:
    return params_text(params)


def print_report(r: TuneReport, top: int = 10, out=None) -> None:
    w = (out or sys.stdout).write
    w(f"tune {r.operator} [{r.case}] on {r.chip}: {r.strategy}, {r.workers} worker(s), {r.backend} backend\n")
    n_valid = r.space_size - len(r.invalid)
    w(
        f"  space {r.space_size} configs: {len(r.invalid)} invalid (pruned before emulation), "
        f"{n_valid} valid; pruning took {r.prune_seconds * 1000:.0f} ms\n"
    )
    rate = r.evaluated / r.seconds if r.seconds > 0 else 0.0
    w(
        f"  evaluated {r.evaluated}, from cache {r.cached}"
        + (f", not run {r.skipped}" if r.skipped else "")
        + f" in {r.seconds:.2f} s ({rate:.1f} configs/s){'  CANCELLED' if r.cancelled else ''}\n"
    )
    for note in r.notes:
        w(f"  note: {note}\n")
    if r.best is None:
        w("  no config ran successfully\n")
    else:
        cur = r.current_outcome()
        line = f"  best  {_fmt_params(r.best.params)}  {r.best.time_us:.3f} us"
        if cur is not None and cur.ok:
            line += (
                f"  (current {_fmt_params(r.current)}: {cur.time_us:.3f} us, "
                f"{cur.time_us / r.best.time_us:.2f}x)"
            )
        w(line + "\n")
    ok = r.ranked()[:top]
    if ok:
        names = list(ok[0].params)
        widths = [max(len(n), 6) for n in names]
        w(
            "  "
            + "  ".join(f"{n:>{wd}}" for n, wd in zip(names, widths))
            + f"  {'time_us':>10}  {'GFLOPS':>8}  {'UB KiB':>7}\n"
        )
        for o in ok:
            gf = f"{o.gflops:8.1f}" if o.gflops is not None else f"{'-':>8}"
            ub = f"{size_in(o.ub_bytes, 'KiB'):7.1f}" if o.ub_bytes is not None else f"{'-':>7}"
            w(
                "  "
                + "  ".join(f"{o.params[n]!s:>{wd}}" for n, wd in zip(names, widths))
                + f"  {o.time_us:10.3f}  {gf}  {ub}{'  (cached)' if o.cached else ''}\n"
            )
    failed = [o for o in r.outcomes if not o.ok and not o.skipped]
    for o in failed[:5]:
        w(f"  failed {_fmt_params(o.params)}: {o.error.splitlines()[0]}\n")
    if r.invalid:
        reasons = Counter(p.reason for p in r.invalid)
        w("  invalid:\n")
        for reason, n in reasons.most_common(5):
            example = next(p for p in r.invalid if p.reason == reason)
            w(f"    {n:4d} x {reason}  (e.g. {_fmt_params(example.params)})\n")


def _apply(report: TuneReport, args) -> int:
    try:
        plan = plan_apply(report.path, report.best.params)
    except OperatorError as exc:
        print(f"asc-tui tune --apply: {exc}", file=sys.stderr)
        return 1
    out = sys.stderr if args.json else sys.stdout
    if not plan.changed:
        print(f"--apply: {report.path} already has the best parameters", file=out)
        return 0
    out.write(plan.diff())
    if not getattr(args, "yes", False) and sys.stdin.isatty() and not args.json:
        answer = input(f"write these changes to {report.path}? [y/N] ").strip().lower()
        if answer not in ("y", "yes"):
            print("--apply: left unchanged", file=out)
            return 0
    plan.write()
    print(f"--apply: wrote the best parameters to {report.path} (PARAMS defaults)", file=out)
    return 0
