"""The numbers thread (npu/numbers/offload.py): same results as computing inline, in order, and every
GM or L0C access waits for the jobs that write what it touches."""

from __future__ import annotations

import os
import threading
import time

import numpy as np
import pytest

from asc_tui.devkit.run.loader import load_operator
from asc_tui.devkit.run.runner import RunRequest, prepare, run
from asc_tui.npu.chip import load_chip
from asc_tui.npu.launch import launch
from asc_tui.npu.numbers import offload
from asc_tui.npu.numbers.offload import Offload
from tests.test_cube_api import CUBE_BODY, source


def _outputs(name: str, case: str, threaded: bool, monkeypatch) -> dict[str, np.ndarray]:
    monkeypatch.setattr(offload.numbers, "threaded", threaded)
    op = load_operator(name)
    _, _, _, lnch, _, gm = prepare(op, case, {}, timing_only=False, seed=3)
    launch(op.kernel, gm, lnch.tiling, lnch.block_dim, load_chip("ascend910b"), numeric=True)
    return {g.buffer.name: g.buffer.data.copy() for g in gm}


@pytest.mark.parametrize(
    "name,case",
    [
        ("matmul", "small"),
        ("matmul", "tails"),
        ("matmul", "int8_tails"),
        ("matmul", "bf16"),
        ("matmul_official", "bias"),
        ("conv2d", "tails"),
        ("matmul_leaky", "small"),
    ],
)
def test_numbers_thread_gives_the_bits_of_inline_numbers(name, case, monkeypatch):
    inline = _outputs(name, case, False, monkeypatch)
    threaded = _outputs(name, case, True, monkeypatch)
    for buf, want in inline.items():
        assert want.tobytes() == threaded[buf].tobytes(), buf


CHAINED = (
    CUBE_BODY
    + """
    t1 = a1.AllocTensor(half)
    # Y = X·X, written to GM by Fixpipe; then Z = Y·X reads Y back from GM in the same launch
    for step in range(2):
        src = gx if step == 0 else gy
        AscendC.DataCopy(t1, src, Nd2NzParams(1, 16, 16, 0, 16, 16, 1, 0))
        AscendC.LoadData(ta, t1, LoadData2DParams(0, 1, 1, 0, 0, False))
        AscendC.DataCopy(t1, gx, Nd2NzParams(1, 16, 16, 0, 16, 16, 1, 0))
        AscendC.LoadData(tb, t1, LoadData2DParams(0, 1, 1, 0, 0, True))
        AscendC.Mmad(tc, ta, tb, MmadParams(16, 16, 16))
        AscendC.Fixpipe(gy, tc, FixpipeParamsV220(16, 16, 16, 16, QuantMode_t.F322F16))
    AscendC.printf("y0=%.6f", gy.GetValue(0))
"""
)


def _chained_golden() -> str:
    return (
        "(lambda a: np.pad(((a @ a).astype(np.float16).astype(np.float32) @ a)"
        ".astype(np.float16).ravel(), (0, x.size - 256)))"
        "(x[:256].reshape(16, 16).astype(np.float32))"
    )


def test_gm_written_by_a_pending_fixpipe_is_read_back_after_it(write_operator, monkeypatch):
    monkeypatch.setattr(offload.numbers, "threaded", True)
    # a slow BLAS job makes reading GM before the job ran certain, not a matter of luck
    real = offload.numbers.submit

    def slow_submit(job, writes=None, **how):
        real(lambda: (time.sleep(0.02), job()), writes, **how)

    monkeypatch.setattr(offload.numbers, "submit", slow_submit)
    src = source(CHAINED, core="aic", golden=_chained_golden())
    report = run(RunRequest(str(write_operator("chained", src))))
    assert report.ok and report.passed, report.errors or report.precision.to_dict()
    y0 = next(e.text for e in report.emulation.log if e.text.startswith("y0="))
    x = prepare(load_operator(str(write_operator("chained", src))), None, {}, False, 0)[4]["x"]
    a = x[:256].reshape(16, 16).astype(np.float32)
    want = ((a @ a).astype(np.float16).astype(np.float32) @ a).astype(np.float16)[0, 0]
    assert float(y0.split("=")[1]) == pytest.approx(float(want), abs=1e-3)


def test_jobs_run_in_order_and_drain_waits_for_all():
    o = Offload(threaded=True)
    seen = []
    for i in range(20):
        o.submit(lambda i=i: (time.sleep(0.001 * (i % 3)), seen.append(i)))
    o.drain()
    assert seen == list(range(20)) and o.pending == 0


def test_a_failing_job_is_raised_by_drain_and_skips_the_jobs_after_it():
    o = Offload(threaded=True)
    seen = []
    o.submit(lambda: seen.append(1))
    o.submit(lambda: 1 / 0)
    o.submit(lambda: seen.append(3))
    with pytest.raises(ZeroDivisionError):
        o.drain()
    o.submit(lambda: seen.append(4))
    o.drain()  # the error was handed over once; the thread keeps working
    assert seen == [1, 4]


def test_gm_ready_waits_only_for_jobs_writing_that_buffer(monkeypatch):
    class Buf:
        busy = 0

    o = Offload(threaded=True)
    monkeypatch.setattr(offload, "numbers", o)
    written, other = Buf(), Buf()
    done = threading.Event()
    o.submit(lambda: (time.sleep(0.05), done.set()), written)
    offload.gm_ready(other)
    assert not done.is_set()
    offload.gm_ready(written)
    assert done.is_set() and written.busy == 0


def test_a_draining_thread_runs_ready_lane_jobs_early_keeping_each_lane_in_order():
    class Buf:
        busy = 0

    o = Offload(threaded=True)
    gate, seen = threading.Event(), []

    def job(name):
        return lambda: seen.append((name, threading.current_thread().name))

    o.submit(lambda: gate.wait(5))  # holds the worker while the main thread drains
    o.submit(job("a1"), lane="a", ready=lambda: True)
    o.submit(job("b1"), lane="b", ready=lambda: True)
    o.submit(job("a2 writes GM"), Buf(), lane="a")
    o.submit(job("b2"), lane="b", ready=lambda: True)
    o.submit(job("c1 not ready"), lane="c", ready=lambda: False)
    o.submit(job("laneless"))
    threading.Timer(0.2, gate.set).start()
    o.drain()
    order = [name for name, _ in seen]
    where = dict(seen)
    main = threading.current_thread().name
    # ready jobs that start their lane went early, on the draining thread, latest first
    assert order[:3] == ["b1", "b2", "a1"]
    assert {where["a1"], where["b1"], where["b2"]} == {main}
    # the rest ran on the worker in submission order (a2 after a1: same lane)
    assert order[3:] == ["a2 writes GM", "c1 not ready", "laneless"]
    assert {where[n] for n in order[3:]} == {"asc-tui cube numbers"} and o.pending == 0


def test_inline_mode_runs_jobs_at_once():
    o = Offload(threaded=False)
    seen = []
    o.submit(lambda: seen.append(threading.current_thread()))
    assert seen == [threading.current_thread()] and o.thread is None


@pytest.mark.skipif(
    not hasattr(os, "sched_getaffinity") or len(os.sched_getaffinity(0)) < 2,
    reason="needs Linux and two CPUs",
)
def test_a_launch_that_hands_work_over_pins_the_threads_apart_and_then_frees_them():
    o = Offload(threaded=True)
    cpus = os.sched_getaffinity(0)
    o.begin()
    o.submit(lambda: None)
    me = os.sched_getaffinity(0)
    worker = os.sched_getaffinity(o.thread.native_id)
    assert len(me) == 1 and not me & worker and worker
    o.drain()
    o.finish()
    assert os.sched_getaffinity(0) == cpus == os.sched_getaffinity(o.thread.native_id)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_gets_its_own_numbers_thread():
    offload.numbers.submit(lambda: None)
    offload.numbers.drain()
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: jobs still run, on a thread of its own
        try:
            seen = []
            offload.numbers.submit(lambda: seen.append(threading.current_thread().name))
            offload.numbers.drain()
            os.write(w, (seen[0] if offload.numbers.threaded else "inline").encode())
        finally:
            os._exit(0)
    os.close(w)
    os.waitpid(pid, 0)
    assert os.read(r, 100).decode() in ("asc-tui cube numbers", "inline")


def test_blas_runs_one_threaded_during_a_launch_and_as_before_after_it():
    from asc_tui.npu.numbers import blas

    before = blas.set_threads(None)
    o = Offload(threaded=True)
    o.begin()
    during = blas.set_threads(None)
    o.finish()
    assert blas.set_threads(None) == before
    assert during in (1, None)
