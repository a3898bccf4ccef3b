"""Hot reload engine: debounced watcher, atomic saves, only affected operators, cancel in flight."""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import time
from pathlib import Path

from asc_tui.devkit.run.runner import RunRequest
from asc_tui.devkit.run.watch import FileWatcher, Rerunner, classify, is_temp_file
from asc_tui.devkit.run.worker import RunWorker

ADD_CUSTOM = Path(__file__).parent / "tui_data" / "add_custom.py"


def test_editor_temp_files_are_ignored():
    for name in (".add.py.swp", "add.py~", ".#add.py", "4913", ".add.py.tmp"):
        assert is_temp_file(Path(name))
    assert not is_temp_file(Path("add.py"))


def test_classify_maps_saves_to_operators_and_tomls_to_everything(tmp_path):
    a = tmp_path / "a.py"
    a.write_text("")
    cs = classify([(1, str(a)), (1, str(tmp_path / ".a.py.tmp"))], tmp_path)
    assert cs.operators == {a.resolve()} and not cs.everything
    assert classify([(1, str(tmp_path / "asc-tui.toml"))], tmp_path).config
    assert classify([(2, str(tmp_path / "_helpers.py"))], tmp_path).everything
    assert classify([(1, str(tmp_path / ".x.swp"))], tmp_path) is None
    gone = classify([(3, str(tmp_path / "b.py"))], tmp_path)
    assert gone.removed == {(tmp_path / "b.py").resolve()}


def _wait(q: queue.Queue, pred, timeout=20.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            item = q.get(timeout=0.2)
        except queue.Empty:
            continue
        if pred(item):
            return item
    raise AssertionError("no matching result in time")


def test_save_and_atomic_rename_rerun_only_the_saved_operator(tmp_path):
    ops = tmp_path / "ops"
    ops.mkdir()
    a, b = ops / "a.py", ops / "b.py"
    src = ADD_CUSTOM.read_text()
    a.write_text(src)
    b.write_text(src)
    results: queue.Queue = queue.Queue()
    worker = RunWorker(timeout_s=10)
    rr = Rerunner(
        worker,
        lambda p: RunRequest(str(p), case="tail", timing_only=True),
        on_result=lambda p, r: results.put((p, r)),
    )
    w = FileWatcher(ops, lambda cs: rr.submit(p for p in (a, b) if cs.affects(p))).start()
    try:
        assert w.wait_ready()
        a.write_text(src.replace("n=100_003", "n=50_000"))  # plain save
        p, r = _wait(results, lambda it: True)
        assert p == a.resolve() and r.report.shapes["x"] != ""
        first = r.report.emulation.kernel_cycles
        tmp = ops / ".a.py.tmp"  # editor-style atomic save
        tmp.write_text(src.replace("n=100_003", "n=200_000"))
        os.replace(tmp, a)
        p, r = _wait(results, lambda it: True)
        assert p == a.resolve() and r.report.emulation.kernel_cycles > first
        time.sleep(0.3)
        assert results.empty()  # b was never rerun
    finally:
        w.stop()
        rr.stop()
        worker.close()


def test_a_new_save_cancels_the_run_in_flight(tmp_path):
    loop = ADD_CUSTOM.read_text().replace(
        "def tensors(case):", "def tensors(case):\n    while True:\n        pass\n"
    )
    p = tmp_path / "slow.py"
    p.write_text(loop)
    results: queue.Queue = queue.Queue()
    worker = RunWorker(timeout_s=30)
    started = queue.Queue()
    rr = Rerunner(
        worker,
        lambda q: RunRequest(str(q), case="tail"),
        on_start=lambda q, r: started.put(q),
        on_result=lambda q, r: results.put((q, r)),
    )
    try:
        rr.submit([p])
        started.get(timeout=20)
        time.sleep(0.3)
        p.write_text(ADD_CUSTOM.read_text())  # fixed: the hung run must not block it
        rr.submit([p])
        q, r = _wait(results, lambda it: True, timeout=20)
        assert r.passed and rr.cancelled == 1
    finally:
        rr.stop()
        worker.close()


# the real `asc-tui` entry point, run as a child process
CLI = [sys.executable, "-c", "import sys; from asc_tui.cli import main; sys.exit(main())"]


def _dir_with_add(tmp_path) -> Path:
    ops = tmp_path / "ops"
    ops.mkdir()
    (ops / "add.py").write_text(ADD_CUSTOM.read_text())
    return ops


def test_watch_command_prints_a_line_per_rerun(tmp_path):
    ops = _dir_with_add(tmp_path)
    proc = subprocess.Popen(
        [*CLI, "watch", str(ops), "--case", "tail", "--count", "2"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            line = proc.stderr.readline()
            if "watching" in line:
                break
        first = proc.stdout.readline()
        (ops / "add.py").write_text(ADD_CUSTOM.read_text().replace("def tensors(case):", "def tensors(case:"))
        second = proc.stdout.readline()
        assert proc.wait(30) == 1
    finally:
        proc.kill()
    assert "add [tail] PASS" in first and " us" in first
    assert "ERROR" in second and "add.py:" in second and "syntax error" in second


def test_config_file_and_helper_subpackage_changes_affect_every_operator(tmp_path):
    ops = tmp_path / "ops"
    (ops / "lib").mkdir(parents=True)
    (ops / "lib" / "tiles.py").write_text("T = 1\n")
    cfg = tmp_path / "asc-tui.toml"
    cfg.write_text('chip = "ascend910b"\n')
    seen: queue.Queue = queue.Queue()
    w = FileWatcher(ops, seen.put, extra=[cfg]).start()
    try:
        assert w.wait_ready()
        (ops / "lib" / "tiles.py").write_text("T = 2\n")
        cs = seen.get(timeout=10)
        assert cs.everything and not cs.config
        cfg.write_text('chip = "ascend910b4"\n')
        cs = seen.get(timeout=10)
        assert cs.everything and cs.config
    finally:
        w.stop()


def test_a_saved_operator_jumps_ahead_of_a_queued_run_all(tmp_path):
    ops = [tmp_path / f"op{i}.py" for i in range(4)]
    for p in ops:
        p.write_text(ADD_CUSTOM.read_text())
    order: queue.Queue = queue.Queue()
    worker = RunWorker(timeout_s=10)
    gate = queue.Queue()
    rr = Rerunner(
        worker,
        lambda p: (gate.get(timeout=10), RunRequest(str(p), case="tail", timing_only=True))[1],
        on_start=lambda p, r: order.put(p),
    )
    try:
        rr.submit(ops)  # run all: op0 is taken (blocked at the gate), op1..op3 queue
        deadline = time.monotonic() + 10
        while rr.current is None and time.monotonic() < deadline:
            time.sleep(0.01)
        rr.submit([ops[3]], front=True)  # a save of op3
        for _ in range(4):
            gate.put(1)
        assert [order.get(timeout=10) for _ in range(4)] == [
            p.resolve() for p in (ops[0], ops[3], ops[1], ops[2])
        ]
    finally:
        rr.stop()
        worker.close()


def test_watch_command_json_prints_one_run_object_per_result(tmp_path):
    import json

    ops = _dir_with_add(tmp_path)
    out = subprocess.run(
        [*CLI, "watch", str(ops / "add.py"), "--case", "tail", "--json", "--count", "1"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    d = json.loads(out.stdout.splitlines()[0])
    assert d["operator"] == "add" and d["status"] == "ok" and d["passed"]
    assert d["time_us"] > 0 and d["host_seconds"] > 0


def test_a_request_that_cannot_be_made_is_reported_not_fatal(tmp_path):
    results: queue.Queue = queue.Queue()
    worker = RunWorker(timeout_s=10, start=False)

    def bad_request(p):
        raise ValueError("case 'x' not in config")

    rr = Rerunner(worker, bad_request, on_result=lambda p, r: results.put(r))
    try:
        rr.submit([tmp_path / "a.py"])
        r = results.get(timeout=10)
        assert r.status == "raised" and "case 'x'" in r.error.message
        assert rr.idle()
    finally:
        rr.stop()
        worker.close()


def test_sigterm_on_watch_removes_its_worker_temp_folder(tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import time

    tmp = tmp_path / "tmp"
    tmp.mkdir()
    ops = tmp_path / "ops"
    ops.mkdir()
    (ops / "add.py").write_text((Path(__file__).parent / "tui_data" / "add_custom.py").read_text())
    env = {**os.environ, "TMPDIR": str(tmp)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "asc_tui", "watch", str(ops), "--no-initial"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert "watching" in proc.stderr.readline()
        deadline = time.monotonic() + 30
        while not list(tmp.glob("asc-tui-worker-*")) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert list(tmp.glob("asc-tui-worker-*"))
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 128 + signal.SIGTERM
    finally:
        if proc.poll() is None:
            proc.kill()
    assert not list(tmp.glob("asc-tui-worker-*"))


def test_a_runaway_kernel_does_not_hold_up_other_operators(tmp_path):
    loop = ADD_CUSTOM.read_text().replace(
        "def tensors(case):", "def tensors(case):\n    while True:\n        pass\n"
    )
    spin, good = tmp_path / "spin.py", tmp_path / "good.py"
    spin.write_text(loop)
    good.write_text(ADD_CUSTOM.read_text())
    results: queue.Queue = queue.Queue()
    started: queue.Queue = queue.Queue()
    worker = RunWorker(timeout_s=60)
    rr = Rerunner(
        worker,
        lambda q: RunRequest(str(q), case="tail", timing_only=True),
        on_start=lambda q, r: started.put(q),
        on_result=lambda q, r: results.put((q, r)),
    )
    try:
        rr.submit([spin, good])
        assert started.get(timeout=20) == spin.resolve()
        t0 = time.monotonic()
        q, r = _wait(results, lambda it: True, timeout=30)
        assert q == good.resolve() and r.passed
        assert time.monotonic() - t0 < 20  # not the 60 s the runaway may take
        assert rr.running == [spin.resolve()]  # still spinning in its own worker
    finally:
        rr.stop()
        worker.close()
