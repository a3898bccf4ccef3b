"""`asc-tui run OP`: build → emulate → verify, with per-stage host times and the timing summary."""

from __future__ import annotations

import sys

from ..devkit.bench.history import record_run
from ..devkit.isolated import run_isolated
from ..devkit.profile.timing import timing
from ..devkit.run.runner import RunReport, RunRequest
from .common import add_emulation_options, add_target_options, show_results, targets


def add_parser(sub) -> None:
    p = sub.add_parser("run", help="run an operator on the emulated NPU and check its result")
    add_target_options(p, op_optional=True)
    add_emulation_options(p, timing_only=False)
    p.add_argument("--seed", type=int, default=0, help="input data seed")


def main(args) -> int:
    t = targets(args, "asc-tui run")
    if isinstance(t, int):
        return t
    root = t.root
    requests = [
        RunRequest(
            op,
            case=args.case,
            chip=args.chip,
            params=t.params,
            timing_only=args.timing_only,
            seed=args.seed,
            timeout_s=args.timeout,
            root=str(root) if root else None,
        )
        for op in t.ops
    ]
    results = run_isolated(requests, args.timeout, t.config.worker_memory_mb)
    reports = show_results(args, results, print_report, record=lambda r: record_run(r, kind="run"))
    return 0 if all(r.passed for r in reports) else 1


def _print_sample(r: RunReport, w) -> None:
    """A sample directory's own output: its launches, main()'s stdout, the verify script."""
    s = r.sample
    if not s:
        return
    for ln in s.get("launches", []):
        w(f"  launch {ln['kernel']} (line {ln['line']}): {ln['blocks']} blocks, {ln['time_us']:.3f} us\n")
    for line in (s.get("stdout") or "").splitlines()[:20]:
        w(f"  main: {line}\n")
    v = s.get("verify")
    if v:
        for line in v["output"].strip().splitlines()[-5:]:
            w(f"  verify_result.py: {line}\n")
    if s.get("precision"):
        w(f"  precision {s['precision']}\n")


def _g(x: float | None) -> str:
    return "inf" if x is None else f"{x:.3g}"


def _fmt_bytes(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


def print_report(r: RunReport, out=None) -> None:
    out = out or sys.stdout
    w = out.write
    title = f"{r.operator}" + (f" [{r.case}]" if r.case else "") + f" on {r.chip}"
    if r.params:
        title += "  " + " ".join(f"{k}={v}" for k, v in r.params.items())
    w(f"{title}\n")
    for s in r.stages:
        mark = "ok " if s.ok else "ERR"
        w(f"  {mark} {s.name:<8} {s.seconds * 1000:9.1f} ms  {s.detail}\n")
    for e in r.errors:
        w("  " + e.format().replace("\n", "\n  ") + "\n")
    em = r.emulation
    if em is not None:
        t = timing(em)
        w(f"  {t.split('us')}  (block_dim {em.block_dim}, {r.emulation_kind} emulation)\n")
        w(f"  {t.overlap_text()}\n")
        w(f"  {'pipe':<8}{'busy us/core':>14}{'ratio':>9}{'wait':>9}{'instr':>10}\n")
        for name, st in em.pipe_stats().items():
            if st.instructions == 0 and st.busy_us == 0:
                continue
            n = max(em.cores_used, 1)
            w(f"  {name:<8}{st.busy_us / n:14.3f}{st.ratio:9.1%}{st.wait_ratio:9.1%}{st.instructions:10d}\n")
        w(f"  GM read {_fmt_bytes(em.gm_read)}, GM write {_fmt_bytes(em.gm_write)}\n")
        for warn in em.warnings:
            w(f"  warning: {warn.file}:{warn.line}: {warn.message} (x{warn.count})\n")
        for entry in em.log[:50]:
            w(f"  {entry.format()}\n")
        if len(em.log) > 50:
            w(f"  ... {len(em.log) - 50} more log lines (see --json)\n")
    _print_sample(r, w)
    if r.precision is not None:
        p = r.precision.to_dict()
        nonfinite = f"NaN {p['nan']}, Inf {p['inf']}, " if p["nan"] or p["inf"] else ""
        w(
            f"  precision {p['verdict']}: {nonfinite}max abs err {_g(p['max_abs_error'])}, mean rel err "
            f"{_g(p['mean_rel_error'])}, cosine "
            + (f"{p['cosine_similarity']:.6f}" if p["cosine_similarity"] is not None else "invalid")
            + f" ({p['reason']})\n"
        )
    w("\n")
