"""memcheck / racecheck / initcheck / synccheck: each bug class is reported at its exact line."""

from __future__ import annotations

from pathlib import Path

import pytest
from debug_ops import COPY, line_of, source

from asc_tui.devkit.debug.debugger import DebugRequest, debug

BUGS = Path(__file__).resolve().parents[1] / "operators" / "bugs"


def check(write_operator, name, body, tools=("memcheck", "racecheck", "initcheck", "synccheck")):
    text = source(body)
    path = write_operator(name, text)
    return debug(DebugRequest(str(path), tools=tools)), text


def only(report, kind):
    found = [f for f in report.findings if f.kind == kind]
    assert found, f"no {kind} finding in {[f.format() for f in report.findings]}"
    return found[0]


def test_correct_queue_kernel_has_no_reports(write_operator):
    rep, _ = check(write_operator, "copy", COPY)
    assert rep.findings == () and rep.errors == () and rep.clean


# ---- memcheck ---------------------------------------------------------------------------------
def test_gm_tail_read_past_the_window_is_out_of_bounds_with_offset_and_size():
    rep = debug(DebugRequest(str(BUGS / "add_tail_oob.py"), tools=("memcheck",)))
    f = only(rep, "out-of-bounds")
    src = (BUGS / "add_tail_oob.py").read_text()
    assert f.file.endswith("add_tail_oob.py")
    assert f.line == line_of(src, "DataCopy(x_local, self.x_gm[i * self.tile]")
    assert (f.tensor, f.memory, f.access) == ("x_gm", "gm", "Read")
    assert f.offset == 2048 * 2 and f.size == 512 * 2
    assert f.block == 0
    text = f.format()
    assert text.startswith("Out-of-bounds access detected: File: add_tail_oob.py, Line: ")
    assert "Tensor: x_gm (GM), Offset: 4096, Access: Read, Size: 1024 bytes, Reason:" in text
    assert rep.errors == ()  # the guard rail's error is not repeated next to the finding


def test_vector_count_beyond_a_local_tensor_is_out_of_bounds_in_ub(write_operator):
    body = COPY.replace("AscendC.Adds(b, a, 0.0, N)", "AscendC.Adds(b, a, 0.0, N + 16)  # here")
    rep, text = check(write_operator, "ub_oob", body, ("memcheck",))
    f = only(rep, "out-of-bounds")
    assert f.line == line_of(text, "# here")
    assert f.memory == "ub" and f.tensor == "b" and f.access == "Write"
    assert f.size == (1024 + 16) * 2


def test_datacopy_length_not_a_multiple_of_32_bytes_is_reported(write_operator):
    body = COPY.replace("AscendC.DataCopy(a, x_gm, N)", "AscendC.DataCopy(a, x_gm, 100)  # here")
    rep, text = check(write_operator, "short", body, ("memcheck",))
    f = only(rep, "misaligned-length")
    assert f.line == line_of(text, "# here")
    assert "200 B" in f.reason and "192 B" in f.reason


def test_operand_at_an_unaligned_ub_address_is_misaligned(write_operator):
    body = COPY.replace("AscendC.Adds(b, a, 0.0, N)", "AscendC.Adds(b, a[3], 0.0, 64)  # here")
    rep, text = check(write_operator, "unaligned", body, ("memcheck",))
    f = only(rep, "misaligned")
    assert f.line == line_of(text, "# here") and f.access == "Read"
    assert "not a multiple of 32 B" in f.reason


def test_use_after_free_names_the_tensor(write_operator):
    body = COPY.replace("qi.FreeTensor(a)\n", "qi.FreeTensor(a)\nAscendC.Adds(b, a, 1.0, N)  # here\n")
    rep, text = check(write_operator, "uaf", body, ("memcheck",))
    f = only(rep, "use-after-free")
    assert f.line == line_of(text, "# here") and f.tensor == "a" and f.access == "Read"


def test_double_free_is_an_illegal_free_at_the_second_call(write_operator):
    body = COPY.replace("qo.FreeTensor(b)", "qo.FreeTensor(b)\nqo.FreeTensor(b)  # here")
    rep, text = check(write_operator, "dfree", body, ("memcheck",))
    f = only(rep, "illegal-free")
    assert f.line == line_of(text, "# here") and "double free" in f.reason
    assert rep.errors == ()


def test_tensor_never_freed_is_a_leak_at_its_allocation(write_operator):
    body = COPY.replace("qo.FreeTensor(b)", "") + "c = qi.AllocTensor(half)  # leak\n"
    rep, text = check(write_operator, "leak", body, ("memcheck",))
    leaks = sorted(f.line for f in rep.findings if f.kind == "leak")
    assert leaks == sorted([line_of(text, "b = qo.AllocTensor"), line_of(text, "# leak")])


def test_initbuffer_beyond_ub_reports_capacity_with_the_numbers(write_operator):
    body = "q = TQue(QuePosition.VECIN, 1)\npipe.InitBuffer(q, 2, 100000)  # here\n"
    rep, text = check(write_operator, "cap", body, ("memcheck",))
    f = only(rep, "capacity")
    assert f.line == line_of(text, "# here")
    assert "200000 B" in f.reason and "196608 B" in f.reason


# ---- racecheck --------------------------------------------------------------------------------
def test_missing_waitflag_in_double_buffering_is_a_raw_race():
    src = (BUGS / "double_buffer_race.py").read_text()
    rep = debug(DebugRequest(str(BUGS / "double_buffer_race.py"), tools=("racecheck",)))
    assert [f.kind for f in rep.findings] == ["race-raw"]
    f = rep.findings[0]
    assert f.line == line_of(src, "AscendC.Muls(y_local, x_local")
    assert f.other == f"mte2 write at line {line_of(src, 'DataCopy(x_local, self.x_gm')}"
    assert (f.tensor, f.pipe, f.access) == ("x_local", "vec", "Read")


def test_double_buffering_with_the_waitflag_restored_is_clean(write_operator):
    src = (
        (BUGS / "double_buffer_race.py")
        .read_text()
        .replace(
            "# BUG: missing AscendC.WaitFlag(HardEvent.MTE2_V, b)", "AscendC.WaitFlag(HardEvent.MTE2_V, b)"
        )
    )
    path = write_operator("double_buffer_fixed", src)
    rep = debug(DebugRequest(str(path)))
    assert rep.findings == () and rep.errors == ()


def test_dma_overwriting_a_buffer_the_vector_pipe_reads_is_a_war_race(write_operator):
    body = """
buf = TBuf(QuePosition.VECCALC)
pipe.InitBuffer(buf, 4 * N)
t = buf.Get(half)
AscendC.DataCopy(t, x_gm, N)
AscendC.SetFlag(HardEvent.MTE2_V, 0)
AscendC.WaitFlag(HardEvent.MTE2_V, 0)
AscendC.Adds(t[N], t, 1.0, N)
AscendC.DataCopy(t, x_gm, N)  # here
"""
    rep, text = check(write_operator, "war", body, ("racecheck",))
    f = only(rep, "race-war")
    assert f.line == line_of(text, "# here") and f.pipe == "mte2" and f.access == "Write"


# ---- initcheck --------------------------------------------------------------------------------
def test_reading_scratch_memory_nobody_wrote_is_uninitialized(write_operator):
    body = """
buf = TBuf(QuePosition.VECCALC)
pipe.InitBuffer(buf, 4 * N)
t = buf.Get(half)
AscendC.Duplicate(t, 1.0, 512)
AscendC.Adds(t[N], t, 1.0, N)  # here
"""
    rep, text = check(write_operator, "uninit", body, ("initcheck",))
    f = only(rep, "uninitialized")
    assert f.line == line_of(text, "# here") and f.tensor == "t"
    assert f.reason.startswith("1024 of 2048 bytes read were never written")
    assert "first at UB+1024" in f.reason


# ---- synccheck --------------------------------------------------------------------------------
def test_waitflag_without_setflag_is_an_in_core_deadlock_with_pipe_states(write_operator):
    body = """
buf = TBuf(QuePosition.VECCALC)
pipe.InitBuffer(buf, 2 * N)
t = buf.Get(half)
AscendC.DataCopy(t, x_gm, N)
AscendC.WaitFlag(HardEvent.MTE2_V, 1)  # here
"""
    rep, text = check(write_operator, "hang", body, ("synccheck",))
    assert [f.kind for f in rep.findings] == ["deadlock"] and rep.errors == ()
    f = rep.findings[0]
    assert f.line == line_of(text, "# here") and f.pipe == "vec"
    assert any(s.startswith("vec") and "blocked" in s for s in f.states)
    assert any(s.startswith("mte2") and "DataCopy" in s for s in f.states)


def test_event_id_beyond_the_chip_is_reported(write_operator):
    body = "AscendC.SetFlag(HardEvent.MTE2_V, 9)  # here\n"
    rep, text = check(write_operator, "ids", body, ("synccheck",))
    f = only(rep, "event-ids")
    assert f.line == line_of(text, "# here") and "0..7" in f.reason


def test_set_twice_before_wait_is_redundant_and_a_left_over_set_unpaired(write_operator):
    body = """
AscendC.SetFlag(HardEvent.MTE2_V, 0)  # first
AscendC.SetFlag(HardEvent.MTE2_V, 0)  # second
AscendC.WaitFlag(HardEvent.MTE2_V, 0)
"""
    rep, text = check(write_operator, "sets", body, ("synccheck",))
    red = only(rep, "redundant-set")
    assert red.line == line_of(text, "# second")
    assert red.other == f"SetFlag at line {line_of(text, '# first')}"
    assert only(rep, "unpaired-set").line == line_of(text, "# second")


@pytest.mark.parametrize("tool", ["memcheck", "racecheck", "initcheck", "synccheck"])
def test_a_tool_not_asked_for_reports_nothing(tool):
    others = tuple(t for t in ("memcheck", "racecheck", "initcheck", "synccheck") if t != tool)
    rep = debug(DebugRequest(str(BUGS / "double_buffer_race.py"), tools=(tool,)))
    assert all(f.tool == tool for f in rep.findings)
    assert all(t not in rep.to_dict()["counts"] for t in others)


def test_cube_load_past_an_l1_tensor_is_out_of_bounds(write_operator):
    body = """
from asc_tui.ascendc import LoadData, LoadData2DParams, TPosition
a1, a2 = TQue(TPosition.A1, 1), TQue(TPosition.A2, 1)
pipe.InitBuffer(a1, 1, 512)
pipe.InitBuffer(a2, 1, 1024)
l1, l0a = a1.AllocTensor(half), a2.AllocTensor(half)
LoadData(l0a, l1, LoadData2DParams(repeatTimes=2, srcStride=1))  # here
"""
    rep, text = check(write_operator, "l1_oob", body, ("memcheck",))
    f = only(rep, "out-of-bounds")
    assert f.line == line_of(text, "# here") and "L1 tensor holds 512 B" in f.reason
    assert rep.errors == ()


def test_cube_load_into_an_unaligned_l0a_address_is_misaligned(write_operator):
    body = """
from asc_tui.ascendc import LoadData, LoadData2DParams, TPosition
a1, a2 = TQue(TPosition.A1, 1), TQue(TPosition.A2, 1)
pipe.InitBuffer(a1, 1, 512)
pipe.InitBuffer(a2, 1, 2048)
l1, l0a = a1.AllocTensor(half), a2.AllocTensor(half)
LoadData(l0a[16], l1, LoadData2DParams())  # here
"""
    rep, text = check(write_operator, "l0_align", body, ("memcheck",))
    f = only(rep, "misaligned")
    assert f.line == line_of(text, "# here") and "L0A" in f.reason


def test_blocks_writing_the_same_gm_are_a_race_between_blocks(write_operator):
    text = source(COPY).replace("return Launch(1, None)", "return Launch(4, None)")
    text = text.replace("AscendC.DataCopy(y_gm, b, N)", "AscendC.DataCopy(y_gm, b, N)  # here")
    rep = debug(DebugRequest(str(write_operator("overlap", text)), tools=("racecheck",)))
    f = only(rep, "race-waw")
    assert f.line == line_of(text, "# here") and f.block == 1 and f.tensor == "y"
    assert f.other == f"block 0 write at line {line_of(text, '# here')}"
    assert (f.offset, f.size) == (0, 2048) and f.count == 3


def test_blocks_on_disjoint_slices_are_not_a_race(write_operator):
    text = (
        source(COPY)
        .replace("return Launch(1, None)", "return Launch(4, None)")
        .replace("x_gm.SetGlobalBuffer(x, N)", "x_gm.SetGlobalBuffer(x + AscendC.GetBlockIdx() * 256, 256)")
        .replace("y_gm.SetGlobalBuffer(y, N)", "y_gm.SetGlobalBuffer(y + AscendC.GetBlockIdx() * 256, 256)")
        .replace("N * 2)", "512)")
        .replace(", N)", ", 256)")
    )
    rep = debug(DebugRequest(str(write_operator("slices", text))))
    assert rep.findings == () and rep.errors == () and rep.precision.verdict == "PASS"


def test_dequeue_of_an_empty_queue_is_queue_misuse(write_operator):
    body = "q = TQue(QuePosition.VECIN, 1)\npipe.InitBuffer(q, 1, 64)\nq.DeQue(half)  # here\n"
    rep, text = check(write_operator, "deq", body, ("synccheck",))
    f = only(rep, "queue-misuse")
    assert f.line == line_of(text, "# here") and rep.errors == ()


def test_allocating_more_buffers_than_a_queue_has_is_exhaustion(write_operator):
    body = (
        "q = TQue(QuePosition.VECIN, 1)\npipe.InitBuffer(q, 1, 64)\n"
        "a = q.AllocTensor(half)\nb = q.AllocTensor(half)  # here\n"
    )
    rep, text = check(write_operator, "exhaust", body, ("memcheck",))
    f = only(rep, "alloc-exhausted")
    assert f.line == line_of(text, "# here")


def test_guard_rail_errors_of_tools_not_asked_for_stay_errors(write_operator):
    body = "q = TQue(QuePosition.VECIN, 1)\npipe.InitBuffer(q, 2, 100000)\n"
    rep, _ = check(write_operator, "cap_err", body, ("racecheck",))
    assert rep.findings == () and [e.kind for e in rep.errors] == ["kernel"] and not rep.clean


SCALAR_STORE = """
buf = TBuf(QuePosition.VECCALC)
pipe.InitBuffer(buf, 2 * N)
t = buf.Get(half)
AscendC.Duplicate(t, 0.0, N)
AscendC.SetFlag(HardEvent.V_S, 0)
AscendC.WaitFlag(HardEvent.V_S, 0)
t.SetValue(0, 1.0)  # store
SYNC
AscendC.Adds(t, t, 1.0, N)  # here
"""


def test_vector_read_of_a_scalar_store_without_s_v_is_a_race(write_operator):
    rep, text = check(write_operator, "sst", SCALAR_STORE.replace("SYNC", ""), ("racecheck",))
    f = only(rep, "race-raw")
    assert f.line == line_of(text, "# here") and f.pipe == "vec"
    assert f.other == f"scalar write at line {line_of(text, '# store')}"


def test_scalar_store_ordered_by_s_v_is_clean(write_operator):
    sync = "AscendC.SetFlag(HardEvent.S_V, 0)\nAscendC.WaitFlag(HardEvent.S_V, 0)"
    rep, _ = check(write_operator, "sst_ok", SCALAR_STORE.replace("SYNC", sync))
    assert rep.findings == () and rep.errors == ()
