"""`asc-tui calibrate`: fit a chip model's timing constants to msprof op runs of real hardware.

    asc-tui calibrate --chip ascend910b4 --out my910b4.toml \\
        --run OPPROF_1 vector_add_bias full block_dim=1 tile_length=2048 \\
        --run OPPROF_2 vector_add_bias full block_dim=8 tile_length=2048
    asc-tui calibrate --runs runs.toml --chip ascend910b4 --out my910b4.toml --json

Writes a new chip TOML (the start chip with the fitted values, naming its inputs and residuals),
prints a before/after error table per run and each run's error when left out of the fit.
"""

from __future__ import annotations

from pathlib import Path

from ..devkit.errors import OperatorError
from .common import fail, print_json


def add_parser(sub) -> None:
    p = sub.add_parser(
        "calibrate",
        help="fit the chip model's timing constants to msprof op runs of real hardware",
        description="Least-squares fit of DMA fixed cost, per-core path and HBM bandwidth, vector "
        "start-up and per-repeat cost and launch overhead to measured task durations and per-pipe "
        "times. Each run is a msprof op output directory and the operator, case and params it ran.",
    )
    p.add_argument(
        "--run",
        action="append",
        nargs="+",
        default=[],
        metavar="ARG",
        help="DIR OP [CASE] [KEY=VALUE ...]: one measured run (repeatable)",
    )
    p.add_argument("--runs", metavar="FILE", help="a TOML file of [[run]] tables: dir, op, case, params")
    p.add_argument("--chip", help="chip to start from (name or .toml; default ascend910b)")
    p.add_argument(
        "--out", metavar="FILE", help="where to write the fitted chip (default <chip>-calibrated.toml)"
    )
    p.add_argument("--name", help="name of the fitted chip (default <chip>-calibrated)")
    p.add_argument(
        "--knobs",
        metavar="NAMES",
        help="comma-separated constants to fit (default all; see --json 'constants')",
    )
    p.add_argument("--max-iter", type=int, default=12, help="Levenberg–Marquardt iterations (default 12)")
    p.add_argument("--no-leave-one-out", action="store_true", help="skip the leave-one-out refits")
    p.add_argument("--json", action="store_true", help="print one JSON object")


def _fail(args, message: str, info=None) -> int:
    return fail(args, "asc-tui calibrate", message, info)


def main(args) -> int:
    from ..devkit.calibrate.fit import KNOBS, calibrate, write_chip
    from ..devkit.calibrate.runs import parse_run, read_manifest
    from ..devkit.chips import load_chip

    try:
        chip = load_chip(args.chip)
        specs = read_manifest(args.runs) if args.runs else []
        specs += [parse_run(tokens) for tokens in args.run]
        knobs = KNOBS
        if args.knobs:
            want = [k.strip() for k in args.knobs.split(",") if k.strip()]
            unknown = [w for w in want if w not in {k.name for k in KNOBS}]
            if unknown:
                return _fail(args, f"unknown constants {unknown}; known: {', '.join(k.name for k in KNOBS)}")
            knobs = tuple(k for k in KNOBS if k.name in want)
        if not specs:
            return _fail(args, "give at least one --run DIR OP [CASE] [KEY=VALUE ...] or --runs FILE")
        cal = calibrate(specs, chip, knobs, max_iter=args.max_iter, leave_one_out=not args.no_leave_one_out)
    except OperatorError as exc:
        return _fail(args, exc.info().format(), exc.info().to_dict())
    _remember(specs)
    name = args.name or f"{chip.name}-calibrated"
    out = Path(args.out or f"{name}.toml")
    write_chip(cal, Path(chip.path).read_text(encoding="utf-8"), name, out)
    if args.json:
        d = cal.to_dict()
        d["chip_file"] = str(out)
        print_json(d)
        return 0
    _print(cal, out)
    return 0


def _remember(specs) -> None:
    """Pair each run's directory with what it ran, for `--compare-measured` and the TUI."""
    from ..devkit.profile.measured import remember
    from ..devkit.run.loader import load_operator

    for s in specs:
        try:
            op = load_operator(s.op)
            remember(op.name, op.case(s.case).name, dict(op.resolve_params(s.params)), s.directory)
        except OperatorError:
            continue


def _print(cal, out: Path) -> None:
    from ..devkit.calibrate.runs import FIT_PIPES

    print(f"calibrated {cal.chip_from} on {len(cal.runs)} run(s) in {cal.iterations} iteration(s) → {out}")
    print()
    print(f"{'constant':<36} {'before':>10} {'after':>10}  unit")
    for c in cal.constants:
        note = "" if c.constrained else "  (not constrained: kept)"
        print(f"{c.name:<36} {c.before:>10.5g} {c.after:>10.5g}  {c.unit}{note}")
    print()
    print(
        f"{'run / figure':<44} {'measured':>10} {'before':>10} {'err':>8} {'after':>10} {'err':>8} "
        f"{'left out':>9}"
    )
    for e in cal.errors:
        print(e.label)
        eb, ea, el = e.error("before"), e.error("after"), e.error("left_out")
        for k in ("duration", *FIT_PIPES):
            m = e.measured.get(k)
            if not m:
                continue
            lo = f"{el[k]:>+9.1%}" if el and k in el else f"{'':>9}"
            print(
                f"  {k + ' (µs)':<42} {m:>10.2f} {e.before[k]:>10.2f} {eb[k]:>+8.1%} "
                f"{e.after[k]:>10.2f} {ea[k]:>+8.1%} {lo}"
            )
    print()
    print(f"RMS relative error: {cal.rms_before:.2%} before, {cal.rms_after:.2%} after")
