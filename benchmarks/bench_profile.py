"""asc-profile costs: how much host time profiling adds to a run, and trace/CSV export times.

For each bundled case: `run()` (full mode: build + emulate + verify, as `asc-tui profile` runs
it; one timing-only case too), then at once `profile(report)` on that run's result, repeated in
one process. The overhead is the median of the per-pair ratios profile/run: each pair is
measured back to back, so a change of host speed between pairs (common on this machine) cancels
out. The issue's budget is profile ≤ 10% of run. Trace and msprof export are reported
separately (opt-in files).
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time

CASES = [  # (operator, case, params, timing_only)
    ("add_custom", "default", {}, True),
    ("add_custom", "default", {}, False),
    ("add_custom", "large", {"tile_length": 8192, "block_dim": 48}, False),
    ("softmax", "default", {}, False),
    ("matmul", "default", {}, False),
]


def _time(fn) -> tuple[float, object]:
    t = time.perf_counter()
    out = fn()
    return (time.perf_counter() - t) * 1e3, out


def main(repeat: int = 21, budget_s: float = 4.0) -> dict:
    from asc_tui.devkit.profile.msprof import write_dir
    from asc_tui.devkit.profile.profiler import profile
    from asc_tui.devkit.profile.trace import build_trace
    from asc_tui.devkit.run.runner import RunRequest, run

    figures: dict = {}
    worst = 0.0
    with tempfile.TemporaryDirectory() as root:
        os.environ.setdefault("ASC_TUI_PROJECT", root)
        for op, case, params, timing_only in CASES:
            req = RunRequest(op, case=case, params=params, timing_only=timing_only)
            t, _ = _time(lambda req=req: run(req))  # warm: imports, chip cache, operator module
            run_ms, prof_ms = [], []
            for _ in range(max(5, min(repeat, int(budget_s * 1e3 / max(t, 1e-3))))):
                t, report = _time(lambda req=req: run(req))
                run_ms.append(t)
                t, prof = _time(lambda report=report: profile(report))
                prof_ms.append(t)
            r, p = statistics.median(run_ms), statistics.median(prof_ms)
            overhead = statistics.median(b / a for a, b in zip(run_ms, prof_ms))
            records = sum(len(b) for b in report.emulation.blocks)
            trace_ms, _ = _time(lambda report=report: build_trace(report.emulation))
            out_dir = os.path.join(root, f"{op}-{case}-{timing_only}")
            csv_ms, _ = _time(lambda prof=prof, d=out_dir: write_dir(prof, d))
            key = f"{op}[{case}]" + (" timing-only" if timing_only else "")
            figures[key] = {
                "records": records,
                "run_ms": round(r, 2),
                "profile_ms": round(p, 3),
                "overhead": round(overhead, 4),
                "trace_build_ms": round(trace_ms, 2),
                "msprof_write_ms": round(csv_ms, 2),
            }
            worst = max(worst, overhead)
            print(
                f"   {key:<32} {records:>7} records  run {r:8.2f} ms  profile {p:7.3f} ms  "
                f"(+{overhead:6.2%})  trace {trace_ms:7.2f} ms  csv {csv_ms:6.2f} ms"
            )
    figures["worst_overhead"] = round(worst, 4)
    figures["budget"] = 0.10
    figures["within_budget"] = worst <= 0.10
    print(f"   worst profiling overhead {worst:.2%} of run time (budget 10%)")
    return figures


if __name__ == "__main__":
    main()
