"""--deadlock-check: ranks run together; skipped, reordered or mismatched collectives are
reported per rank, within seconds, and a correct distributed operator passes on 2-8 ranks."""

from __future__ import annotations

from pathlib import Path

import pytest

from asc_tui.devkit.debug.deadlock import run_ranks

REPO = Path(__file__).resolve().parents[1]
SKIP = REPO / "operators" / "bugs" / "allreduce_skip.py"

OP = """
from dataclasses import dataclass

import numpy as np

from asc_tui import ascendc as AscendC
from asc_tui.ascendc import GM_ADDR, Hccl, HcclDataType, HcclReduceOp, half
from asc_tui.operator import In, Launch, Out

CASES = {"default": dict(n=256)}
F16, SUM = HcclDataType.HCCL_DATA_TYPE_FP16, HcclReduceOp.HCCL_REDUCE_SUM


def tensors(case):
    return {"x": In(case.n, half), "y": Out(case.n * 8, half)}


def tiling(case, p):
    return Launch(1, case.n)


def golden(case, x):
    return np.zeros(case.n * 8, np.float16)


@AscendC.kernel
def k(x: GM_ADDR, y: GM_ADDR, n):
    hccl = Hccl()
    hccl.Init(AscendC.GetHcclContext())
    rank, dim = hccl.GetRankId(), hccl.GetRankDim()
BODY
"""


def op_file(write_operator, name, body):
    lines = "\n".join("    " + ln for ln in body.strip("\n").splitlines())
    return write_operator(name, OP.replace("BODY", lines))


@pytest.mark.parametrize("ranks", [2, 8])
def test_correct_allreduce_finishes_on_every_rank_with_the_right_sum(ranks):
    rep = run_ranks("allreduce_sum", ranks, timeout_s=20)
    assert rep.outcome == "ok" and rep.ok
    assert [r.status for r in rep.rank_reports] == ["finished"] * ranks
    assert rep.precision is not None and rep.precision.verdict == "PASS"
    assert len(rep.precision.outputs) == 2 * ranks


def test_last_rank_skipping_the_allreduce_is_a_deadlock_reported_per_rank():
    rep = run_ranks(str(SKIP), 4, timeout_s=30)
    assert rep.outcome == "deadlock" and rep.step == 1 and not rep.ok
    assert rep.message.startswith("Deadlock detected at step 1")
    wait_line = next(
        i for i, ln in enumerate(SKIP.read_text().splitlines(), 1) if "self.hccl.Wait(handle)" in ln
    )
    for rr in rep.rank_reports[:3]:
        assert rr.status == "waiting" and rr.line == wait_line
        assert rr.detail.startswith("waiting for AllReduce #1 (timeout 30s)")
    last = rep.rank_reports[3]
    assert last.status == "finished" and "finished without calling AllReduce #1" in last.detail
    assert rep.seconds < 10


def test_collectives_in_different_order_are_reported_with_both_lines(write_operator):
    body = """
if rank == 1:
    h = hccl.AllGather(x, y, n, F16, commit=True)  # gather
else:
    h = hccl.AllReduce(x, y, n, F16, SUM, commit=True)  # reduce
hccl.Wait(h)
"""
    path = op_file(write_operator, "reorder", body)
    rep = run_ranks(str(path), 3, timeout_s=20)
    assert rep.outcome == "order"
    assert "collectives called in different order" in rep.message
    assert "AllGather on rank 1" in rep.message and "AllReduce on rank 0" in rep.message
    err = rep.errors[0]
    assert err.line == next(i for i, ln in enumerate(path.read_text().splitlines(), 1) if "# gather" in ln)


def test_mismatched_count_is_reported(write_operator):
    body = """
cnt = n if rank != dim - 1 else n // 2
h = hccl.AllReduce(x, y, cnt, F16, SUM, commit=True)
hccl.Wait(h)
"""
    rep = run_ranks(str(op_file(write_operator, "mismatch", body)), 4, timeout_s=20)
    assert rep.outcome == "mismatch"
    assert "count=128" in rep.message and "count=256" in rep.message


def test_mismatched_reduce_op_is_reported(write_operator):
    body = """
op = HcclReduceOp.HCCL_REDUCE_MAX if rank == 0 else SUM
h = hccl.AllReduce(x, y, n, F16, op, commit=True)
hccl.Wait(h)
"""
    rep = run_ranks(str(op_file(write_operator, "mismatch_op", body)), 2, timeout_s=20)
    assert rep.outcome == "mismatch" and "op=max" in rep.message and "op=sum" in rep.message


def test_second_collective_skipped_by_one_rank_deadlocks_at_step_two(write_operator):
    body = """
h = hccl.AllGather(x, y, n, F16, commit=True)
hccl.Wait(h)
if rank != 0:
    h = hccl.Broadcast(x, n, F16, 0, commit=True)
    hccl.Wait(h)
"""
    rep = run_ranks(str(op_file(write_operator, "step2", body)), 5, timeout_s=20)
    assert rep.outcome == "deadlock" and rep.step == 2
    assert rep.rank_reports[0].status == "finished"
    assert "without calling Broadcast #2" in rep.rank_reports[0].detail
    assert all(r.status == "waiting" for r in rep.rank_reports[1:])


def test_wait_without_commit_is_an_error_not_a_hang(write_operator):
    body = """
h = hccl.AllReduce(x, y, n, F16)  # no commit
hccl.Wait(h)
"""
    rep = run_ranks(str(op_file(write_operator, "nocommit", body)), 2, timeout_s=20)
    assert rep.outcome == "error" and "never committed" in rep.message


def test_a_rank_in_an_endless_loop_is_stopped_at_the_timeout(write_operator):
    body = """
while rank == 1:
    pass  # spin
h = hccl.AllReduce(x, y, n, F16, SUM, commit=True)
hccl.Wait(h)
"""
    rep = run_ranks(str(op_file(write_operator, "spin", body)), 2, timeout_s=1.0)
    assert rep.outcome == "timeout"
    r1 = rep.rank_reports[1]
    assert r1.status == "timeout" and r1.line is not None
    assert rep.rank_reports[0].status == "waiting"
    assert rep.seconds < 8


def test_allgather_reducescatter_and_broadcast_move_the_right_data(write_operator):
    body = """
from asc_tui.ascendc import GlobalTensor
g = GlobalTensor(half)
g.SetGlobalBuffer(y, n * 8)
h = hccl.AllGather(x, y, n, F16, commit=True)
hccl.Wait(h)
h = hccl.ReduceScatter(y, y + 4 * n, n // 4, F16, SUM, commit=True)
hccl.Wait(h)
h = hccl.Broadcast(x, 8, F16, 2, commit=True)
hccl.Wait(h)
"""
    import numpy as np

    from asc_tui.ascendc.sync import communicator as H
    from asc_tui.devkit.debug import deadlock as D

    path = op_file(write_operator, "moves", body)
    captured = {}
    real = D._summarise

    def spy(op, case_name, sched, setups, timeout_s, seconds):
        captured["setups"] = setups
        return real(op, case_name, sched, setups, timeout_s, seconds)

    D._summarise = spy
    try:
        rep = run_ranks(str(path), 4, timeout_s=20)
    finally:
        D._summarise = real
    assert rep.outcome == "ok", rep.format()
    xs = [s[4]["x"] for s in captured["setups"]]
    ys = [s[4]["y"] for s in captured["setups"]]
    n = 256
    gathered = ys[0][: 4 * n]
    for r in range(4):  # every rank holds all x's (theirs past the first 8, broadcast later)
        assert np.array_equal(ys[r][: 4 * n], gathered)
        assert np.array_equal(gathered[r * n + 8 : (r + 1) * n], xs[r][8:])
    # ReduceScatter of the gathered buffer (identical on every rank): rank r gets 4 x chunk r
    chunk = (gathered.astype(np.float32) * 4).astype(np.float16)
    for r in range(4):
        want = chunk[r * (n // 4) : (r + 1) * (n // 4)]
        assert np.array_equal(ys[r][4 * n : 4 * n + n // 4], want)
    for r in range(4):  # Broadcast from rank 2 overwrote everyone's first 8 elements of x
        assert np.array_equal(xs[r][:8], xs[2][:8])
    assert not np.array_equal(xs[0][8:16], xs[2][8:16])
    assert isinstance(H.DEFAULT_LINK_GBPS, float)


def test_allreduce_costs_latency_plus_ring_bytes_over_the_link():
    from asc_tui.ascendc.sync.communicator import DEFAULT_LATENCY_US, DEFAULT_LINK_GBPS

    one = run_ranks("allreduce_sum", 1).rank_reports[0].time_us
    four = run_ranks("allreduce_sum", 4).rank_reports
    nbytes = 4096 * 2
    want = DEFAULT_LATENCY_US + 2 * 3 / 4 * nbytes / (DEFAULT_LINK_GBPS * 1e3)
    assert all(r.time_us == pytest.approx(one + want, rel=1e-6) for r in four)
