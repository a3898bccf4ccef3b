"""`asc-tui profile OP` (alias `asc-profile OP`): where the time goes.

Runs the operator once, then profiles the result (breakdown, roofline, pipeline report, hot
lines) and optionally writes a Chrome trace and msprof-op CSVs. `--import DIR` reads a msprof op
directory instead of running anything. `--auto-tune`/`--quick-tune` hand over to the tuner.
"""

from __future__ import annotations

import sys

from ..config import ConfigError
from ..devkit.bench.history import record_run
from ..devkit.errors import OperatorError
from ..devkit.isolated import run_isolated
from ..devkit.present.report_lines import origin_line, precision_line
from ..devkit.run.runner import RunRequest
from .common import (
    add_emulation_options,
    add_target_options,
    apply_config,
    config_failure,
    fail,
    parse_params,
    print_json,
    print_output,
)


def add_parser(sub) -> None:
    p = sub.add_parser(
        "profile",
        help="where the time goes: breakdown, pipeline report, hot lines, traces",
        description="Profile one run of an operator on the emulated NPU (or import msprof op "
        "data with --import DIR).",
    )
    add_target_options(p, op_optional=True)
    for action in p._actions:
        if action.dest == "op":
            action.help = "operator name (bundled or in ./operators) or path"
    p.add_argument(
        "--pipeline-report", action="store_true", help="utilisation and waits per unit, overlap, core balance"
    )
    p.add_argument(
        "--lines",
        nargs="?",
        type=int,
        const=10,
        default=None,
        metavar="N",
        help="print the N hottest source lines (default 10; --json has all)",
    )
    p.add_argument(
        "--trace", metavar="FILE", help="write a Chrome trace-event JSON (Perfetto, chrome://tracing)"
    )
    p.add_argument(
        "--trace-limit",
        type=int,
        default=None,
        metavar="N",
        help="at most N events in the trace, the earliest (default 200000)",
    )
    p.add_argument(
        "--msprof-dir",
        metavar="DIR",
        help="write OpBasicInfo/PipeUtilization/Memory/ResourceConflictRatio.csv",
    )
    p.add_argument(
        "--import",
        dest="import_dir",
        metavar="DIR",
        help="read a msprof op output directory instead of running",
    )
    p.add_argument(
        "--compare-measured",
        nargs="?",
        const="",
        default=None,
        metavar="DIR",
        help="show measured (msprof op DIR, or the one imported for this case and params) beside "
        "emulated: duration, each pipe's time, ratio and wait ratio, and the error of each",
    )
    add_emulation_options(p, timing_only=False)
    p.add_argument("--seed", type=int, default=0, help="input data seed")
    tune = p.add_mutually_exclusive_group()
    tune.add_argument(
        "--auto-tune", action="store_true", help="search all tiling parameters (same as `asc-tui tune OP`)"
    )
    tune.add_argument("--quick-tune", action="store_true", help="model-guided search with a small budget")


def _fail(args, message: str, info=None) -> int:
    return fail(args, "asc-tui profile", message, info)


def main(args) -> int:
    if args.auto_tune or args.quick_tune:
        from .tune_cmd import tune_from_profile_args

        if not args.op:
            return _fail(args, "--auto-tune/--quick-tune need an operator")
        return int(tune_from_profile_args(args, quick=bool(args.quick_tune)) or 0)
    from ..devkit.chips import load_chip

    try:
        args.worker_memory_mb = apply_config(args).worker_memory_mb
    except ConfigError as exc:
        return config_failure(args, exc, "asc-tui profile")
    chip = None
    if args.chip or args.import_dir is None:
        try:
            chip = load_chip(args.chip)
        except OperatorError as exc:
            return _fail(args, str(exc), exc.info().to_dict())
    if args.import_dir:
        return _import(args, chip)
    if len(args.op) != 1:
        return _fail(args, "give one operator (or --import DIR)")
    return _profile(args, chip)


def _import(args, chip) -> int:
    from ..devkit.profile.msprof import read_dir

    try:
        prof = read_dir(args.import_dir, chip)
        if len(args.op) == 1:  # pair it with what it ran, for --compare-measured and the TUI
            from ..devkit.profile.measured import remember
            from ..devkit.run.loader import load_operator

            op = load_operator(args.op[0])
            case = op.case(args.case).name
            remember(op.name, case, dict(op.resolve_params(parse_params(args.param))), args.import_dir)
    except OperatorError as exc:
        return _fail(args, exc.info().format(), exc.info().to_dict())
    return _output(args, prof, None)


def _profile(args, chip) -> int:
    from ..devkit.profile.profiler import profile

    req = RunRequest(
        args.op[0],
        case=args.case,
        chip=args.chip,
        params=parse_params(args.param),
        timing_only=args.timing_only,
        seed=args.seed,
        timeout_s=args.timeout,
    )
    (res,) = run_isolated([req], args.timeout, args.worker_memory_mb)
    report = res.report
    record_run(report, kind="profile")
    if report.emulation is None:
        if args.json:
            print_json(res.to_dict())
        else:
            from .run_cmd import print_report

            print_report(report, sys.stderr)
            print_output(res.stdout, sys.stderr)
        return 1
    prof = profile(report, chip)
    if not args.json:
        print_output(res.stdout)
    measured = None
    if args.compare_measured is not None:
        from ..devkit.profile.measured import compare, lookup
        from ..devkit.profile.msprof import read_dir

        where = args.compare_measured or lookup(report.operator, report.case, dict(report.params))
        if not where:
            return _fail(
                args,
                f"no msprof data imported for {report.operator} [{report.case}] {dict(report.params)}; "
                "import it with `asc-tui profile OP --case ... --param ... --import DIR` or give "
                "--compare-measured DIR",
            )
        try:
            measured = compare(prof, read_dir(where, chip), str(where))
        except OperatorError as exc:
            return _fail(args, exc.info().format(), exc.info().to_dict())
    return _output(args, prof, report, {"exit": res.exit.to_dict(), "stdout": res.stdout}, measured)


def _output(args, prof, report, extra: dict | None = None, measured=None) -> int:
    extras: list[str] = []
    out: dict = dict(extra or {})
    if measured is not None:
        from ..devkit.profile.measured import lines

        out["measured_comparison"] = measured.to_dict()
        extras.extend(lines(measured))
    if args.trace:
        if report is None:
            return _fail(args, "--trace needs a run (imported msprof data has no timeline)")
        from ..devkit.profile.trace import DEFAULT_LIMIT, write_trace

        limit = args.trace_limit if args.trace_limit is not None else DEFAULT_LIMIT
        info = write_trace(report.emulation, args.trace, limit, prof.core_kind)
        out["trace"] = info.to_dict()
        cut = f", truncated at {info.cutoff_us:,.3f} µs (--trace-limit {limit})" if info.truncated else ""
        extras.append(
            f"trace: {info.path} ({info.events:,} of {info.total:,} events, "
            f"{info.flows:,} flows{cut}) — open in https://ui.perfetto.dev"
        )
    if args.msprof_dir:
        from ..devkit.profile.msprof import write_dir

        files = write_dir(prof, args.msprof_dir)
        out["msprof_files"] = files
        extras.append(f"msprof CSVs: {args.msprof_dir} ({len(files)} files)")
    passed = True
    if report is not None:
        passed = report.passed
        if report.precision is not None:
            extras.insert(0, precision_line(report.precision).text)
        if report.nonfinite is not None:
            extras.insert(1, origin_line(report.nonfinite).text)
    if args.json:
        d = prof.to_dict()
        d.update(out)
        if report is not None:
            d["run"] = {
                "stages": [{"name": s.name, "seconds": s.seconds, "ok": s.ok} for s in report.stages],
                "precision": report.precision.to_dict() if report.precision else None,
                "errors": [e.to_dict() for e in report.errors],
                "verdict": report.verdict.value,
                "passed": passed,
            }
        print_json(d)
    else:
        from ..devkit.present.profile import console, render

        render(prof, console(), pipeline_report=args.pipeline_report, lines=args.lines, extras=extras)
    return 0 if passed else 1
