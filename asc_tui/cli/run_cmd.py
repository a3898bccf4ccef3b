"""`asc-tui run OP`: build → emulate → verify, with per-stage host times and the timing summary."""

from __future__ import annotations

import sys

from ..devkit.bench.history import record_run
from ..devkit.isolated import run_isolated
from ..devkit.present.report_lines import head_lines, plain, tail_lines
from ..devkit.profile.timing import timing
from ..devkit.run.runner import RunReport, RunRequest
from ..devkit.text import params_text, size_text
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
    return max((r.verdict.exit_code for r in reports), default=0)


def print_report(r: RunReport, out=None) -> None:
    out = out or sys.stdout
    w = out.write
    title = f"{r.operator}" + (f" [{r.case}]" if r.case else "") + f" on {r.chip}"
    if r.params:
        title += "  " + params_text(r.params)
    w(f"{title}\n")
    w(plain(head_lines(r)))
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
        w(f"  GM read {size_text(em.gm_read)}, GM write {size_text(em.gm_write)}\n")
    w(plain(tail_lines(r)) + "\n")
