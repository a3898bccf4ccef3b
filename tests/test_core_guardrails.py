"""Each guard rail stops the run with a message naming the user's file and line."""

from __future__ import annotations

import gc
import textwrap

from asc_tui.devkit.run.runner import RunRequest, run
from tests.opsrc import line_of, operator_source

COPY = """
pipe = TPipe()
q = TQue(QuePosition.VECIN, 1)
o = TQue(QuePosition.VECOUT, 1)
pipe.InitBuffer(q, 1, n * 2)
pipe.InitBuffer(o, 1, n * 2)
xg = GlobalTensor(half); xg.SetGlobalBuffer(x, n)
yg = GlobalTensor(half); yg.SetGlobalBuffer(y, n)
"""


def _run(write_operator, *parts: str, **kw):
    src = operator_source("\n".join(textwrap.dedent(p).strip("\n") for p in parts), **kw)
    path = write_operator("broken", src)
    report = run(RunRequest(str(path)))
    assert report.errors, "the run should have failed"
    return report.errors[0], src, path


def test_exception_in_kernel_names_the_line(write_operator):
    err, src, path = _run(
        write_operator,
        """
        a = 1
        b = a / 0  # <- here
    """,
    )
    assert err.kind == "exception"
    assert "ZeroDivisionError" in err.message
    assert err.file == str(path) and err.line == line_of(src)


def test_the_garbage_collector_is_back_on_after_a_failed_or_finished_launch(write_operator):
    # launches pause the cyclic GC while blocks run (npu/launch/guards.py); it must never stay off
    assert gc.isenabled()
    _run(
        write_operator,
        """
        a = 1
        b = a / 0
    """,
    )
    assert gc.isenabled()
    assert run(RunRequest("add_custom", timing_only=True)).ok
    assert gc.isenabled()


def test_initbuffer_over_capacity_names_line_and_numbers(write_operator):
    err, src, path = _run(
        write_operator,
        """
        pipe = TPipe()
        q = TQue(QuePosition.VECIN, 2)
        pipe.InitBuffer(q, 2, 100000)  # <- here
    """,
    )
    assert err.kind == "kernel"
    assert err.line == line_of(src) and err.file == str(path)
    assert "200000 B" in err.message and "196608 B" in err.message  # all of UB: not a mix kernel
    assert "'q'" in err.message or "(q," in err.message


def test_initbuffer_rounds_lengths_up_to_32_bytes(write_operator):
    err, src, _ = _run(
        write_operator,
        """
        pipe = TPipe()
        a = TQue(QuePosition.VECIN, 1)
        b = TQue(QuePosition.VECIN, 1)
        pipe.InitBuffer(a, 1, 196576)
        pipe.InitBuffer(b, 1, 33)  # <- here
    """,
    )
    # 33 B rounds up to 64 B; 196576 + 64 > 196608 B of UB (a vector kernel has all of it).
    assert err.line == line_of(src)
    assert "1 x 64 B" in err.message and "32 B left" in err.message


def test_datacopy_outside_global_tensor_names_line(write_operator):
    err, src, _ = _run(
        write_operator,
        COPY,
        """
        t = q.AllocTensor(half)
        AscendC.DataCopy(t, xg[16], n)  # <- here
    """,
    )
    assert err.line == line_of(src)
    assert "outside the GlobalTensor 'x'" in err.message
    assert "[16, 2064)" in err.message


def test_deque_on_empty_queue_names_line(write_operator):
    err, src, _ = _run(
        write_operator,
        COPY,
        """
        t = q.DeQue(half)  # <- here
    """,
    )
    assert err.line == line_of(src)
    assert "DeQue on empty queue 'q'" in err.message


def test_alloc_past_the_buffers_without_free_names_line(write_operator):
    err, src, _ = _run(
        write_operator,
        COPY,
        """
        t1 = q.AllocTensor(half)
        t2 = q.AllocTensor(half)  # <- here
    """,
    )
    assert err.line == line_of(src)
    assert "all 1 buffer(s) are in use" in err.message


def test_wait_without_set_is_an_in_core_deadlock(write_operator):
    err, src, _ = _run(
        write_operator,
        """
        AscendC.WaitFlag(HardEvent.MTE2_V, 0)  # <- here
    """,
    )
    assert err.kind == "sync" and err.line == line_of(src)
    assert "would hang" in err.message


def test_event_id_out_of_range(write_operator):
    err, src, _ = _run(
        write_operator,
        """
        AscendC.SetFlag(HardEvent.MTE2_V, 8)  # <- here
    """,
    )
    assert err.kind == "sync" and err.line == line_of(src)
    assert "8 ids per event type" in err.message


def test_failed_assert_traps_with_its_message(write_operator):
    err, src, _ = _run(
        write_operator,
        """
        AscendC.ascendc_assert(n < 10, "n too big: %d", n)  # <- here
    """,
    )
    assert err.kind == "assert" and err.line == line_of(src)
    assert "n too big: 2048" in err.message


def test_endless_loop_is_stopped_with_its_line(write_operator):
    src = operator_source("""
        while True:
            pass  # <- here
    """)
    path = write_operator("loop", src)
    report = run(RunRequest(str(path), timeout_s=0.5))
    err = report.errors[0]
    assert err.kind == "timeout"
    assert err.line in (line_of(src), line_of(src) - 1)
    # how far the block got tells an endless loop from a kernel too large for the limit
    assert "block 0 had issued" in err.message and "instructions" in err.message


def test_syntax_error_points_at_the_line(write_operator):
    path = write_operator("syntax", "CASES = {\n  'a': dict(n=1\n\ndef f(:\n  pass\n")
    report = run(RunRequest(str(path)))
    err = report.errors[0]
    assert err.kind == "build" and err.file == str(path)
    assert err.line in (2, 4)


def test_missing_module_parts_are_listed(write_operator):
    path = write_operator("empty", "X = 1\n")
    err = run(RunRequest(str(path))).errors[0]
    assert "CASES" in err.message and "tensors" in err.message and "kernel" in err.message
