"""Sanitizer overhead on vector_add_bias (default case) and the multi-rank check's wall time.

Target (issue 5): memcheck+initcheck ≤ 2x the plain run. Figures are medians of interleaved
repetitions (plain, memcheck+initcheck, racecheck, synccheck, all four) so machine load hits
every variant alike; both the whole run (build + emulate + verify) and the emulate stage alone.
"""

from __future__ import annotations

import statistics
import time

from asc_tui.devkit.debug.deadlock import run_ranks
from asc_tui.devkit.debug.sanitizer import TOOLS, Sanitizer
from asc_tui.devkit.run.loader import load_operator
from asc_tui.devkit.run.runner import RunRequest, run

VARIANTS = {
    "plain": (),
    "memcheck+initcheck": ("memcheck", "initcheck"),
    "racecheck": ("racecheck",),
    "synccheck": ("synccheck",),
    "all": TOOLS,
}


def _once(op, tools) -> tuple[float, float]:
    san = Sanitizer(tools) if tools else None
    t = time.perf_counter()
    rep = run(RunRequest("vector_add_bias"), op=op, sanitizer=san)
    total = time.perf_counter() - t
    emu = next(s.seconds for s in rep.stages if s.name == "emulate")
    assert rep.passed and (san is None or not san.findings())
    return total, emu


def main(reps: int = 15) -> dict:
    op = load_operator("vector_add_bias")
    for tools in VARIANTS.values():  # warm-up
        _once(op, tools)
    samples = {k: ([], []) for k in VARIANTS}
    for _ in range(reps):
        for name, tools in VARIANTS.items():
            total, emu = _once(op, tools)
            samples[name][0].append(total)
            samples[name][1].append(emu)
    out = {}
    base_t = statistics.median(samples["plain"][0])
    base_e = statistics.median(samples["plain"][1])
    print(f"vector_add_bias [default], median of {reps}:")
    print(f"  {'variant':<20}{'run ms':>9}{'x plain':>9}{'emulate ms':>12}{'x plain':>9}")
    for name, (tot, emu) in samples.items():
        t, e = statistics.median(tot), statistics.median(emu)
        out[name] = {
            "run_ms": t * 1e3,
            "run_ratio": t / base_t,
            "emulate_ms": e * 1e3,
            "emulate_ratio": e / base_e,
        }
        print(f"  {name:<20}{t * 1e3:9.2f}{t / base_t:9.2f}{e * 1e3:12.2f}{e / base_e:9.2f}")
    ok = out["memcheck+initcheck"]["run_ratio"] <= 2.0
    print(f"  target memcheck+initcheck <= 2x plain run: {'met' if ok else 'MISSED'}")
    out["target_met"] = ok
    for ranks in (2, 8):
        t = time.perf_counter()
        rep = run_ranks("allreduce_sum", ranks, timeout_s=30)
        dt = time.perf_counter() - t
        bad = run_ranks("operators/bugs/allreduce_skip.py", ranks, timeout_s=30)
        dt_bad = bad.seconds
        print(
            f"  deadlock check allreduce_sum {ranks} ranks: {dt * 1e3:.1f} ms ({rep.outcome}); "
            f"allreduce_skip: {dt_bad * 1e3:.1f} ms ({bad.outcome})"
        )
        out[f"deadlock_{ranks}_ranks_ms"] = dt * 1e3
        out[f"deadlock_skip_{ranks}_ranks_ms"] = dt_bad * 1e3
    return out


if __name__ == "__main__":
    main()
