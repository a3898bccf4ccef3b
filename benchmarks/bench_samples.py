"""A sample directory's whole loop: gen_data → host main() → verify_result.py + precision.

The 00_introduction add sample (read in place from /work/asc-devkit when present, else the test
suite's own `tests/samples/vadd`), run in this process as `asc-tui run DIR` does in its worker.
Target: ≤ 1 s for the loop; gen_data's own time (numpy in the sample's script) reported apart.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEVKIT_ADD = Path("/work/asc-devkit/examples/01_simd_cpp_api/00_introduction/01_add/add_tpipe_tque")
OWN = HERE.parent / "tests" / "samples" / "vadd"


def main() -> dict:
    from asc_tui.devkit.run.runner import RunRequest, run

    sample = DEVKIT_ADD if DEVKIT_ADD.is_dir() else OWN
    req = RunRequest(str(sample))
    first = time.perf_counter()
    r = run(req)  # cold: translation into the cache, numpy and the emulator warm up
    cold = time.perf_counter() - first
    assert r.passed, r.errors
    loops, gens, stages = [], [], {}
    for _ in range(5):
        t = time.perf_counter()
        r = run(req)
        loops.append(time.perf_counter() - t)
        gens.append(r.sample["gen_data_s"] or 0.0)
        for s in r.stages:
            stages.setdefault(s.name, []).append(s.seconds)
    loop, gen = statistics.median(loops), statistics.median(gens)
    per_stage = {k: round(statistics.median(v) * 1e3, 1) for k, v in stages.items()}
    print(
        f"{sample.name}: whole loop {loop * 1e3:.0f} ms (target <= 1000 ms; cold {cold * 1e3:.0f} ms), "
        f"of which gen_data.py's own {gen * 1e3:.0f} ms; stages {per_stage} ms"
    )
    return {
        "sample": str(sample),
        "loop_ms": round(loop * 1e3, 1),
        "cold_ms": round(cold * 1e3, 1),
        "gen_data_ms": round(gen * 1e3, 1),
        "stages_ms": per_stage,
        "within_target": loop <= 1.0,
    }
