"""Every record names the op and source line its instruction really had, whatever path the launch
took. A record's op and line are ids into its launch's `ops`/`lines` tables, and each launch
interns them in its own order: the shared-HBM reruns (npu/memory/shared_hbm.py) are launches of their
own, and a matmul's first pass interns its extrapolated loops (npu/extrapolate/periodic.py) table by table
where a rerun that follows a plan runs them step by step — so a rerun's records read through the
first pass's tables named Mmad on the fixpipe and Fixpipe on the cube. The reference runs each
block step by step. Its work records are those of one pass on lockstep prices (what a block
issues does not depend on timing); its waits are those of the shared-HBM timeline (whether an
AllocTensor or DeQue stalls does), so those are compared with a step-by-step run of all passes."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

import numpy as np
import pytest

from asc_tui import ascendc as AscendC
from asc_tui.devkit.run.loader import load_operator
from asc_tui.devkit.run.runner import prepare
from asc_tui.npu.chip import load_chip
from asc_tui.npu.launch import launch, make_gm
from asc_tui.npu.memory import shared_hbm
from asc_tui.npu.pipes import FIX, MTE1, MTE2, PIPE_NAMES, M
from asc_tui.npu.records import KIND_WORK
from asc_tui.operator import Case
from tests.test_hbm_properties import NARROW, Plan, _copy_tiles, _setup

B = load_chip("ascend910b")
#: The only pipe each of matmul_official's work ops can run on (its waits may be on any).
WORK_PIPE = {"Mmad": M, "LoadData": MTE1, "DataCopy(Nd2Nz)": MTE2, "Fixpipe": FIX}


def _named(em, work: bool) -> list[Counter]:
    """Each block's work records (`work`) or all of them as a multiset of (op name, pipe, kind,
    file, line)."""
    ops = np.asarray(em.ops, dtype=object)
    out = []
    for b in em.blocks:
        keep = b.kind == KIND_WORK if work else slice(None)
        sites = [em.lines[i] for i in b.line[keep].tolist()]
        names = ops[b.op[keep]].tolist()
        out.append(
            Counter(
                (o, PIPE_NAMES[p], k, f, ln)
                for o, p, k, (f, ln) in zip(names, b.pipe[keep].tolist(), b.kind[keep].tolist(), sites)
            )
        )
    return out


def _run(op, case: str, knobs: dict, numeric: bool, chip, configure=None):
    _, _, _, lnch, _, gm = prepare(op, case, knobs, not numeric, 0)
    return launch(op.kernel, gm, lnch.tiling, lnch.block_dim, chip, numeric=numeric, configure=configure)


def _one_pass(run) -> None:
    _step_by_step(run)
    run.hbm_shared = False


def _step_by_step(run) -> None:
    run.replay = False
    run.extrapolate = False


def _matmul(m: int, n: int, k: int):
    op = load_operator("matmul_official")
    return replace(op, cases={**op.cases, "h": Case("h", dict(m=m, n=n, k=k, bias=False))})


def _assert_named_as_step_by_step(op, knobs: dict, numeric: bool, chip) -> object:
    seen = []
    em = _run(op, "h", knobs, numeric, chip, seen.append)
    assert seen[0].hbm_passes > 1  # the path under test: the records are a rerun's
    for reference, work in ((_one_pass, True), (_step_by_step, False)):
        ref = _run(op, "h", knobs, numeric, chip, reference)
        assert [b.block for b in em.blocks] == [b.block for b in ref.blocks]
        for block, (got, want) in enumerate(zip(_named(em, work), _named(ref, work))):
            assert got == want, f"block {block}: {sorted((got - want).items())[:4]}"
        assert em.warnings == ref.warnings
    return em


def _assert_work_on_its_pipe(em) -> None:
    ops = np.asarray(em.ops, dtype=object)
    work = em.records.kind == KIND_WORK
    pairs = set(zip(ops[em.records.op[work]].tolist(), em.records.pipe[work].tolist()))
    assert pairs and all(WORK_PIPE[o] == p for o, p in pairs), sorted(pairs)


@pytest.mark.parametrize(
    "mnk,numeric",
    [
        # the first pass extrapolates the K loop, the shared-HBM rerun runs it step by step
        ((1024, 1024, 16384), False),  # a timing-only first pass is let go before the rerun
        ((512, 1024, 8192), True),  # a full run keeps its first pass: the rerun's records win
        ((2048, 2048, 2048), False),  # the rerun's AllocTensor waits where the first pass's did not
    ],
)
def test_a_shared_hbm_reruns_records_keep_their_op_names_and_lines(mnk, numeric):
    em = _assert_named_as_step_by_step(_matmul(*mnk), {}, numeric, B)
    _assert_work_on_its_pipe(em)


def test_a_first_pass_run_again_when_no_rerun_holds_keeps_its_op_names_and_lines(monkeypatch):
    # the timing-only first pass is let go; no rerun holds, so it runs again: a launch of its own
    def one_rerun_that_does_not_hold(model, xf, rerun, used=None, close_enough=None):
        rerun(used)
        return None, 1, False

    monkeypatch.setattr(shared_hbm, "settle", one_rerun_that_does_not_hold)
    em = _assert_named_as_step_by_step(_matmul(1024, 1024, 16384), {}, False, B)
    _assert_work_on_its_pipe(em)


@pytest.mark.parametrize("numeric", [False, True])
def test_replayed_blocks_of_a_second_wave_under_the_shared_hbm_keep_their_op_names(numeric):
    # 50 blocks on 40 vector cores: replayed copies, a tail band and a second wave, several passes
    op = load_operator("vector_add_bias")
    op = replace(op, cases={**op.cases, "h": Case("h", dict(n=50 * 1024 * 6))})
    _assert_named_as_step_by_step(op, dict(tile_length=1024, buffer_num=1, block_dim=50), numeric, NARROW)


def _copy_then_print(x, y, t: Plan):
    """Each block copies its tiles GM→UB→GM, waits for every pipe, then prints."""
    b, xg, yg, q = _setup(x, y, t)
    _copy_tiles(xg, yg, q, t.tile, t.tiles[b])
    AscendC.PipeBarrier(AscendC.Pipe.PIPE_ALL)
    AscendC.printf("block %d copied, from %d", b, int(xg.GetValue(0)))


copy_then_print = AscendC.kernel(_copy_then_print)


@pytest.mark.parametrize("numeric", [False, True])
def test_a_shared_hbm_reruns_log_is_at_the_times_of_its_timeline(numeric):
    # the log's texts come from the first pass (a rerun reads shadows), its times from the rerun
    # whose timeline is shown: a printf after a barrier on every pipe is at or after the block's
    # last record
    plan = Plan(2048, (4, 1, 4), (0, 0, 0))
    n = 3 * 4 * 2048
    x = np.arange(n).astype(np.float16)
    seen = []
    em = launch(
        copy_then_print,
        [make_gm("x", np.float16, n, x), make_gm("y", np.float16, n, np.zeros(n, np.float16))],
        plan,
        3,
        NARROW,
        numeric=numeric,
        configure=seen.append,
    )
    assert seen[0].hbm_passes > 1
    if numeric:  # the data's values, not a shadow's
        want = [f"block {b} copied, from {b * 4 * 2048}" for b in range(3)]
        assert sorted(e.text for e in em.log) == want
    for e in em.log:
        b = em.blocks[e.block]
        assert e.time_us * em.clock_mhz >= b.end.max() - 1e-6


_TABLES = """
import json
from dataclasses import replace
from asc_tui.devkit.run.loader import load_operator
from asc_tui.devkit.run.runner import prepare
from asc_tui.npu.chip import load_chip
from asc_tui.npu.launch import launch
from asc_tui.operator import Case
op = load_operator("matmul_official")
op = replace(op, cases={**op.cases, "h": Case("h", dict(m=512, n=1024, k=8192, bias=False))})
_, _, _, lnch, _, gm = prepare(op, "h", {}, True, 0)
em = launch(op.kernel, gm, lnch.tiling, lnch.block_dim, load_chip("ascend910b"), numeric=False)
print(json.dumps([em.ops, em.lines, em.records.op.tolist()[:5000], em.records.line.tolist()[:5000]]))
"""


def test_op_and_line_tables_are_the_same_in_processes_with_other_string_hashes():
    # a set's order follows the process's string hashes: tables interned in it numbered the same
    # launch's ops differently from one process to the next (results of equal runs compared unequal)
    import os
    import subprocess
    import sys

    def tables(seed: str) -> str:
        env = {**os.environ, "PYTHONHASHSEED": seed}
        out = subprocess.run(
            [sys.executable, "-c", _TABLES], env=env, capture_output=True, text=True, check=True
        )
        return out.stdout

    assert tables("1") == tables("2") == tables("3")
