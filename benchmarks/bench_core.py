"""Emulator core speed (issue 2): full emulation vs numpy, timing-only throughput, peak memory.

(a) vector_add_bias at 80M half elements, TILE 2048, BLOCK_DIM 8: the emulate stage (numeric +
    timing) against numpy computing `x + bias` on the same arrays — ratio of medians, wall and
    CPU time (process_time; numpy's add is single-threaded).
(b) timing-only emulation of the same config: emulated instructions per host second. Printed
    next to it: the host's speed on a fixed pure-Python loop, measured in the same rounds,
    because this shared machine's CPU speed moves by up to 2x over minutes (a rough indicator:
    the emulator, heavier on memory, does not always move with the loop).
(c) peak memory allocated during (a), from tracemalloc (numpy reports its buffers to it).
"""

from __future__ import annotations

import statistics
import sys
import time
import tracemalloc
from pathlib import Path

from asc_tui.devkit.run.loader import load_operator
from asc_tui.devkit.run.runner import prepare
from asc_tui.npu.chip import load_chip
from asc_tui.npu.launch import launch

sys.path.insert(0, str(Path(__file__).resolve().parent))

from host import python_loop, timed  # noqa: E402

PARAMS = dict(block_dim=8, tile_length=2048, buffer_num=1)


#: (label, operator, case, params) of the timing-only throughput runs
TIMING_CASES = [
    ("vector_add_bias", "vector_add_bias", "full", PARAMS),
    ("matmul_official 4096^3", "matmul_official", "large", {}),
]


def _timing_only(label: str, name: str, case: str, params: dict, rounds: int = 5) -> dict:
    """Timing-only throughput of one operator, replay and extrapolation on and off, interleaved
    with the host's speed (the 5M-addition loop): emulated instructions per second and, normalised, how many
    Python additions one emulated instruction costs (CPU time / instructions / loop time per
    addition)."""
    op = load_operator(name)
    chip = load_chip("ascend910b4")
    _, _, _, lnch, _, gm = prepare(op, case, params, timing_only=True, seed=0)

    def go(replay: bool):
        def configure(run):  # block replay and loop extrapolation (npu/replay/replay.py, periodic.py)
            run.replay = run.extrapolate = replay

        return launch(op.kernel, gm, lnch.tiling, lnch.block_dim, chip, numeric=False, configure=configure)

    n_instr = go(True).instructions
    wall, cpu, step_cpu, ref = [], [], [], []
    for _ in range(rounds):
        w, c = time.perf_counter(), time.process_time()
        go(True)
        wall.append(time.perf_counter() - w)
        cpu.append(time.process_time() - c)
        c = time.process_time()
        python_loop()
        ref.append(time.process_time() - c)
        c = time.process_time()
        go(False)
        step_cpu.append(time.process_time() - c)
    t_wall, t_cpu, t_step = (statistics.median(x) for x in (wall, cpu, step_cpu))
    t_ref = statistics.median(ref)
    per_add = t_ref / 5_000_000
    adds = t_cpu / n_instr / per_add
    adds_step = t_step / n_instr / per_add
    print(
        f"(b) timing-only {label}: {n_instr:,} instructions in {t_cpu:.3f} s CPU = "
        f"{n_instr / t_cpu:,.0f} instr/s = {adds:.1f} Python additions per instruction "
        f"(goal <= 20); step by step (replay and extrapolation off): {t_step:.3f} s CPU = "
        f"{n_instr / t_step:,.0f} instr/s = {adds_step:.1f} additions; host: 5M-addition loop "
        f"{t_ref:.3f} s CPU; wall {t_wall:.3f} s",
        flush=True,
    )
    return {
        "instructions": n_instr,
        "cpu_s": t_cpu,
        "wall_s": t_wall,
        "instr_per_s": n_instr / t_wall,
        "instr_per_cpu_s": n_instr / t_cpu,
        "additions_per_instruction": adds,
        "step_by_step_cpu_s": t_step,
        "step_by_step_additions_per_instruction": adds_step,
        "python_loop_5m_cpu_s": t_ref,
    }


def main() -> dict:
    op = load_operator("vector_add_bias")
    chip = load_chip("ascend910b4")
    case, p, specs, lnch, arrays, gm = prepare(op, "full", PARAMS, timing_only=False, seed=0)
    x, bias = arrays["x"], arrays["bias"]

    def emulate_full():
        return launch(op.kernel, gm, lnch.tiling, lnch.block_dim, chip, numeric=True)

    def numpy_add():
        return x + bias

    # interleave so both see the same machine state; numpy's add is single-threaded, so CPU
    # time (less disturbed by the other processes on a shared machine) compares like with like
    t_np, t_emu = [], []
    for _ in range(5):
        t_np.append(timed(numpy_add)[:2])
        t_emu.append(timed(emulate_full)[:2])
    med_np, med_emu = (statistics.median(w for w, _ in t) for t in (t_np, t_emu))
    cpu_np, cpu_emu = (statistics.median(c for _, c in t) for t in (t_np, t_emu))
    ratio, cpu_ratio = med_emu / med_np, cpu_emu / cpu_np
    print(
        f"(a) full emulation 80M half: {med_emu:.3f} s wall, {cpu_emu:.3f} s CPU   numpy x+bias: "
        f"{med_np:.3f} s wall, {cpu_np:.3f} s CPU   ratio {ratio:.2f}x wall, {cpu_ratio:.2f}x CPU "
        f"(goal <= 1.5x)"
    )

    timing = {}
    for label, name, case, params in TIMING_CASES:
        timing[label] = _timing_only(label, name, case, params)
    t_ref = timing["vector_add_bias"]["python_loop_5m_cpu_s"]
    rate = timing["vector_add_bias"]["instr_per_s"]
    t_cpu = timing["vector_add_bias"]["cpu_s"]
    n_instr = timing["vector_add_bias"]["instructions"]

    tracemalloc.start()
    emulate_full()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    inputs = sum(a.nbytes for a in arrays.values())
    print(
        f"(c) peak memory allocated during (a): {peak / 2**20:.1f} MiB "
        f"(on top of the {inputs / 2**20:.0f} MiB of input/output arrays)"
    )
    return {
        "full_emulation_s": med_emu,
        "numpy_s": med_np,
        "ratio": ratio,
        "full_emulation_cpu_s": cpu_emu,
        "numpy_cpu_s": cpu_np,
        "cpu_ratio": cpu_ratio,
        "timing_only_instr_per_s": rate,
        "timing_only_instr_per_cpu_s": n_instr / t_cpu,
        "python_loop_5m_cpu_s": t_ref,
        "timing_only": timing,
        "peak_alloc_mib": peak / 2**20,
    }


if __name__ == "__main__":
    main()
