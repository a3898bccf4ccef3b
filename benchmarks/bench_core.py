"""Emulator core speed (issue 2): full emulation vs numpy, timing-only throughput, peak memory.

(a) vector_add_bias at 80M half elements, TILE 2048, BLOCK_DIM 8: the emulate stage (numeric +
    timing) against numpy computing `x + bias` on the same arrays — ratio of medians.
(b) timing-only emulation of the same config: emulated instructions per host second. Printed
    next to it: the host's speed on a fixed pure-Python loop, measured in the same rounds,
    because this shared machine's CPU speed moves by up to 2x over minutes (a rough indicator:
    the emulator, heavier on memory, does not always move with the loop).
(c) peak memory allocated during (a), from tracemalloc (numpy reports its buffers to it).
"""

from __future__ import annotations

import statistics
import time
import tracemalloc

from asc_tui.devkit.loader import load_operator
from asc_tui.devkit.runner import prepare
from asc_tui.npu.chip import load_chip
from asc_tui.npu.launch import launch

PARAMS = dict(block_dim=8, tile_length=2048, buffer_num=1)


def _python_loop() -> None:
    """A fixed pure-Python workload (5M additions): the host's interpreter speed right now."""
    s = 0
    for i in range(5_000_000):
        s += i


def _median_time(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> dict:
    op = load_operator("vector_add_bias")
    chip = load_chip("ascend910b4")
    case, p, specs, lnch, arrays, gm = prepare(op, "full", PARAMS, timing_only=False, seed=0)
    x, bias = arrays["x"], arrays["bias"]

    def emulate_full():
        return launch(op.kernel, gm, lnch.tiling, lnch.block_dim, chip, numeric=True)

    def numpy_add():
        return x + bias

    # interleave so both see the same machine state
    t_np, t_emu = [], []
    for _ in range(3):
        t_np.append(_median_time(numpy_add, 1))
        t_emu.append(_median_time(emulate_full, 1))
    med_np, med_emu = statistics.median(t_np), statistics.median(t_emu)
    ratio = med_emu / med_np
    print(
        f"(a) full emulation 80M half: {med_emu:.3f} s   numpy x+bias: {med_np:.3f} s   "
        f"ratio {ratio:.2f}x (target <= 10x, goal <= 3x)"
    )

    _, _, _, lnch_t, _, gm_t = prepare(op, "full", PARAMS, timing_only=True, seed=0)
    result = launch(op.kernel, gm_t, lnch_t.tiling, lnch_t.block_dim, chip, numeric=False)
    n_instr = result.instructions
    wall, cpu, ref = [], [], []
    for _ in range(5):
        w, c = time.perf_counter(), time.process_time()
        launch(op.kernel, gm_t, lnch_t.tiling, lnch_t.block_dim, chip, numeric=False)
        wall.append(time.perf_counter() - w)
        cpu.append(time.process_time() - c)
        c = time.process_time()
        _python_loop()
        ref.append(time.process_time() - c)
    t_timing, t_cpu = statistics.median(wall), statistics.median(cpu)
    t_ref = statistics.median(ref)
    rate = n_instr / t_timing
    print(
        f"(b) timing-only: {n_instr} instructions in {t_timing:.3f} s wall = {rate:,.0f} "
        f"instr/s; {t_cpu:.3f} s CPU = {n_instr / t_cpu:,.0f} instr/s (target >= 300k/s; "
        "CPU time is less sensitive to other load on the machine)"
    )
    print(f"    host speed in the same rounds: a 5M-addition Python loop takes {t_ref:.3f} s CPU")

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
        "timing_only_instr_per_s": rate,
        "timing_only_instr_per_cpu_s": n_instr / t_cpu,
        "python_loop_5m_cpu_s": t_ref,
        "peak_alloc_mib": peak / 2**20,
    }


if __name__ == "__main__":
    main()
