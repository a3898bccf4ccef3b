"""The worker process: user code that hangs, exits or crashes never reaches the caller."""

from __future__ import annotations

from pathlib import Path

import pytest

from asc_tui.devkit.jobs import debug_run
from asc_tui.devkit.run.runner import RunRequest
from asc_tui.devkit.run.worker import Call, RunWorker, innermost_user_frame

ADD_CUSTOM = Path(__file__).parent / "tui_data" / "add_custom.py"


@pytest.fixture(scope="module")
def worker():
    w = RunWorker(timeout_s=3.0)
    yield w
    w.close()


def op_with(tmp_path, name, inject: str):
    src = ADD_CUSTOM.read_text().replace("def tensors(case):", f"def tensors(case):\n{inject}")
    p = tmp_path / f"{name}.py"
    p.write_text(src)
    return p


def test_a_good_operator_returns_its_report(worker):
    res = worker.run(RunRequest(str(ADD_CUSTOM), case="tail"))
    assert res.status == "ok" and res.passed
    assert res.report.emulation.kernel_cycles > 0


def test_infinite_loop_times_out_naming_the_looping_line(worker, tmp_path):
    p = op_with(tmp_path, "loop", "    while True:\n        pass\n")
    res = worker.run(RunRequest(str(p)), timeout_s=1.0)
    assert res.status == "timeout"
    (err,) = res.errors
    assert err.file == str(p) and err.snippet in ("while True:", "pass")  # the looping lines
    assert worker.run(RunRequest(str(ADD_CUSTOM))).passed  # a fresh child took over


def test_sys_exit_in_operator_code_is_an_error_not_an_exit(worker, tmp_path):
    p = op_with(tmp_path, "bye", "    import sys\n    sys.exit(3)\n")
    res = worker.run(RunRequest(str(p)))
    assert res.status == "raised"
    assert "SystemExit" in res.error.message and res.error.file == str(p)


def test_hard_crash_is_reported_and_the_worker_restarts(worker, tmp_path):
    p = op_with(tmp_path, "die", "    import os\n    os._exit(7)\n")
    before = worker.restarts
    res = worker.run(RunRequest(str(p)))
    assert res.status == "crashed" and "exit code 7" in res.error.message
    assert worker.restarts == before + 1
    assert worker.run(RunRequest(str(ADD_CUSTOM))).passed


def test_edited_helper_modules_are_imported_afresh(worker, tmp_path):
    (tmp_path / "helper_tui_w.py").write_text("N = 1024\n")
    header = (
        f"import sys\nsys.path.insert(0, {str(tmp_path)!r})\nfrom helper_tui_w import N\n"
        "CASES['h'] = dict(n=N, dtype='float16')\n\ndef tensors(case):"
    )
    src = ADD_CUSTOM.read_text().replace("def tensors(case):", header)
    p = tmp_path / "uses_helper.py"
    p.write_text(src)
    first = worker.run(RunRequest(str(p), case="h"))
    (tmp_path / "helper_tui_w.py").write_text("N = 4096\n")
    second = worker.run(RunRequest(str(p), case="h"))
    assert first.report.shapes != second.report.shapes


def test_call_forwards_progress_and_returns_the_value(worker):
    seen = []
    res = worker.call(
        Call(debug_run, (RunRequest(str(ADD_CUSTOM), case="tail"),)),
        on_progress=seen.append,
    )
    assert res.ok and res.report.report.passed


def test_faulthandler_dump_parsing_skips_library_frames():
    dump = (
        "Current thread 0x1 (most recent call first):\n"
        '  File "/usr/lib/python3.11/threading.py", line 10 in wait\n'
        '  File "/home/u/ops/foo.py", line 42 in Compute\n'
        '  File "/home/u/ops/foo.py", line 12 in Process\n'
    )
    assert innermost_user_frame(dump) == ("/home/u/ops/foo.py", 42)


def test_closing_the_worker_ends_a_run_in_flight_as_cancelled(tmp_path):
    import threading
    import time

    p = op_with(tmp_path, "spin", "    while True:\n        pass\n")
    w = RunWorker(timeout_s=30)
    out = {}
    t = threading.Thread(target=lambda: out.setdefault("r", w.run(RunRequest(str(p)))))
    t.start()
    while not w.busy:
        time.sleep(0.01)
    time.sleep(0.2)  # the request is in the child now
    w.close()
    t.join(10)
    assert out["r"].status == "cancelled" and w.pid is None


def test_a_warm_spare_replaces_a_cancelled_child_at_once(tmp_path):
    import threading
    import time

    p = op_with(tmp_path, "spin2", "    while True:\n        pass\n")
    w = RunWorker(timeout_s=30, spare=True)
    try:
        assert w.run(RunRequest(str(ADD_CUSTOM), case="tail")).passed  # a spare starts now
        spare_pid = w._spare[0].pid
        out = {}
        t = threading.Thread(target=lambda: out.setdefault("r", w.run(RunRequest(str(p)))))
        t.start()
        while not w.busy:
            time.sleep(0.01)
        time.sleep(0.2)
        w.cancel()
        t.join(10)
        assert out["r"].status == "cancelled"
        assert w.pid == spare_pid  # the warm spare took over; a new spare is warming
        assert w._spare is not None and w._spare[0].pid != spare_pid
        assert w.run(RunRequest(str(ADD_CUSTOM), case="tail")).passed
    finally:
        w.close()
