"""The tune cache: instant re-runs, per-operator invalidation, resume after a real SIGKILL."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from tunesrc import tune_op_source

from asc_tui.devkit.tune import TuneRequest, tune


def _rows(project: Path) -> int:
    db = project / ".asc-tui" / "store.sqlite3"
    if not db.exists():
        return 0
    conn = sqlite3.connect(db, timeout=30)
    try:
        return conn.execute("SELECT count(*) FROM tune_cache").fetchone()[0]
    except sqlite3.OperationalError:  # table not created yet
        return 0
    finally:
        conn.close()


def test_rerunning_an_unchanged_tune_evaluates_nothing(write_operator):
    path = str(write_operator("op", tune_op_source()))
    first = tune(TuneRequest(path, workers=0))
    again = tune(TuneRequest(path, workers=0))
    assert first.evaluated > 0 and first.cached == 0
    assert again.evaluated == 0 and again.cached == first.evaluated
    assert again.best.params == first.best.params
    assert again.best.time_us == first.best.time_us


def test_editing_the_operator_retunes_only_that_operator(write_operator):
    a = write_operator("a", tune_op_source())
    b = write_operator("b", tune_op_source())
    tune(TuneRequest(str(a), workers=0))
    tune(TuneRequest(str(b), workers=0))
    a.write_text(a.read_text() + "\n# edited\n")
    ra = tune(TuneRequest(str(a), workers=0))
    rb = tune(TuneRequest(str(b), workers=0))
    assert ra.cached == 0 and ra.evaluated > 0
    assert rb.evaluated == 0 and rb.cached > 0


def test_another_case_or_chip_is_a_separate_cache_entry():
    tune(TuneRequest("add_custom", case="default", workers=0, budget=3, strategy="random"))
    other = tune(
        TuneRequest("add_custom", case="default", chip="ascend910b4", workers=0, budget=3, strategy="random")
    )
    assert other.cached == 0 and other.evaluated == 3


def test_fresh_forgets_the_scope(write_operator):
    path = str(write_operator("op", tune_op_source()))
    tune(TuneRequest(path, workers=0))
    r = tune(TuneRequest(path, workers=0, fresh=True))
    assert r.cached == 0 and r.evaluated > 0


def test_a_tune_killed_with_sigkill_resumes_losing_only_configs_in_flight(write_operator, isolated_project):
    # every tile costs 2 ms of wall time in the kernel, so the tune takes a few seconds
    path = write_operator(
        "slow",
        tune_op_source(n=65536, tiles=(256, 512, 2048, 4096), refused=0, tiling_refuses=0, sleep=0.002),
    )
    env = {**os.environ, "ASC_TUI_PROJECT": str(isolated_project)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "asc_tui", "tune", str(path), "--workers", "2", "--json"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    deadline = time.monotonic() + 60
    while _rows(isolated_project) < 3 and time.monotonic() < deadline:
        assert proc.poll() is None, proc.stderr.read().decode()
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)  # the tuner and its workers, no chance to clean up
    proc.wait(timeout=30)
    proc.stderr.close()
    assert proc.returncode == -signal.SIGKILL
    kept = _rows(isolated_project)
    out = subprocess.run(
        [sys.executable, "-m", "asc_tui", "tune", str(path), "--workers", "2", "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    valid = report["space_size"] - report["invalid"]
    assert 3 <= kept < valid
    assert report["cached"] == kept
    assert report["evaluated"] == valid - kept
    assert _rows(isolated_project) == valid


def test_applying_the_best_params_keeps_the_cache(write_operator):
    from asc_tui.devkit.tune.apply import plan_apply

    path = write_operator("op", tune_op_source())
    first = tune(TuneRequest(str(path), workers=0))
    plan_apply(path, first.best.params).write()
    again = tune(TuneRequest(str(path), workers=0))
    assert again.evaluated == 0 and again.cached == first.evaluated
    assert again.current == first.best.params


def test_configs_with_the_same_launch_are_emulated_once(write_operator):
    src = tune_op_source().replace("return Launch(p.block_dim,", "return Launch(min(p.block_dim, 2),")
    path = str(write_operator("op", src))
    report = tune(TuneRequest(path, workers=0))
    by = {(o.params["tile"], o.params["bufs"], o.params["block_dim"]): o for o in report.outcomes}
    pairs = [(k, k[:2] + (4,)) for k in by if k[2] == 2]
    assert pairs and all(by[a].time_us == by[b].time_us for a, b in pairs)
    assert report.evaluated == len(report.outcomes) - len(pairs)
    assert report.cached == len(pairs)
