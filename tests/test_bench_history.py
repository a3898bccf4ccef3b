"""Run history and baselines in the project store: what is kept, concurrency, corruption."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from benchsrc import add_bias_source, line_of

from asc_tui.cli import main as cli_main
from asc_tui.devkit.bench import history
from asc_tui.devkit.run.runner import RunRequest, run
from asc_tui.devkit.store import Store

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def op_path(write_operator):
    return write_operator("add_bias", add_bias_source())


@pytest.fixture
def report(op_path):
    r = run(RunRequest(str(op_path), timing_only=True))
    assert r.ok
    return r


def test_a_recorded_run_keeps_operator_source_case_chip_params_and_figures(report, tmp_path):
    rid = history.record_run(report, kind="run")
    store = Store(tmp_path)
    rec = history.get(store, rid)
    assert (rec.kind, rec.operator, rec.case, rec.chip) == ("run", "add_bias", "default", "ascend910b")
    assert rec.source_hash == report.source_hash
    assert rec.params == {"block_dim": 4, "tile_length": 2048, "buffer_num": 1}
    assert rec.time_us == pytest.approx(report.emulation.time_us)
    assert rec.io_bytes == report.io_bytes
    stats = report.emulation.pipe_stats()
    assert rec.pipes["mte2"].busy_us == pytest.approx(stats["mte2"].busy_us / 4)
    assert rec.pipes["vec"].instructions == stats["vec"].instructions


def test_per_line_costs_name_the_operator_lines(report, op_path):
    rid = history.record_run(report, kind="bench")
    rec = history.get(Store(), rid)
    src = op_path.read_text()
    by_line = {c.line: c for c in rec.lines}
    add = line_of(src, "AscendC.Add(yl")
    assert by_line[add].text.startswith("AscendC.Add(yl, xl, bl, L)")
    assert all(c.file == str(op_path) for c in rec.lines)
    total = sum(c.cycles for c in rec.lines)
    busy = sum(s.busy_us for k, s in report.emulation.pipe_stats().items() if k != "scalar")
    assert total / report.emulation.clock_mhz == pytest.approx(busy)


def test_previous_run_is_the_latest_of_the_same_operator_case_and_chip(report):
    store = Store()
    first = history.record_run(report, "run", store)
    second = history.record_run(report, "profile", store)
    history.record_run(report, "tune", store)  # tuning trials are not the reference
    prev = history.previous_run(store, "add_bias", "default", "ascend910b")
    assert prev.id == second
    assert history.previous_run(store, "add_bias", "default", "ascend910b", before_id=second).id == first
    assert history.previous_run(store, "add_bias", "small", "ascend910b") is None
    assert history.previous_run(store, "add_bias", "default", "ascend910b4") is None


def test_unknown_kind_is_refused(report):
    with pytest.raises(ValueError):
        history.record_from_report(report, "walk")


def test_baselines_are_saved_by_name_and_found_from_another_operator(report):
    store = Store()
    rid = history.record_run(report, "bench", store)
    history.save_baseline(store, "official", history.get(store, rid))
    assert history.load_baseline(store, "official", "default", "ascend910b", "add_bias").id == rid
    found = history.load_baseline(store, "official", "default", "ascend910b", "my_op")
    assert found.id == rid  # saved from add_bias, used by my_op on the same case
    assert history.load_baseline(store, "official", "small", "ascend910b") is None
    assert [b["name"] for b in history.baselines(store)] == ["official"]


WRITER = textwrap.dedent("""
    import sys, time, os
    from pathlib import Path
    from asc_tui.devkit.bench import history
    from asc_tui.devkit.run.runner import RunRequest, run
    from asc_tui.devkit.store import Store
    op, root, go, n = sys.argv[1], sys.argv[2], Path(sys.argv[3]), int(sys.argv[4])
    report = run(RunRequest(op, timing_only=True))
    store = Store(root)
    ready = Path(root) / f"ready-{os.getpid()}"
    ready.write_text("")
    while not go.exists():
        time.sleep(0.005)
    ids = [history.record_run(report, "run", store) for _ in range(n)]
    assert all(i is not None for i in ids), ids
    print(len(set(ids)))
""")


def test_two_processes_recording_at_once_lose_nothing(op_path, tmp_path):
    n = 500
    go = tmp_path / "go"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(op_path), str(tmp_path), str(go), str(n)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for _ in range(2)
    ]
    deadline = time.time() + 120
    while len(list(tmp_path.glob("ready-*"))) < 2 and time.time() < deadline:
        time.sleep(0.01)
    go.write_text("go")  # both writers start together
    outs = [p.communicate(timeout=240) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err
        assert out.strip() == str(n)
    store = Store(tmp_path)
    assert history.count(store) == 2 * n
    pids = store.conn.execute(
        "SELECT pid, COUNT(*), COUNT(DISTINCT id) FROM history_runs GROUP BY pid"
    ).fetchall()
    assert sorted(c for _, c, _ in pids) == [n, n]
    assert all(c == d for _, c, d in pids)
    assert {p.pid for p in procs} == {pid for pid, _, _ in pids}


def test_a_corrupt_store_is_kept_aside_and_a_new_one_started(report, tmp_path, capsys):
    path = tmp_path / ".asc-tui" / "store.sqlite3"
    path.parent.mkdir(parents=True, exist_ok=True)
    garbage = b"this is not a database " * 200
    path.write_bytes(garbage)
    rid = history.record_run(report, kind="run")
    err = capsys.readouterr().err
    assert "unreadable" in err and "kept as store.corrupt-" in err
    aside = list(path.parent.glob("store.corrupt-*.sqlite3"))
    assert len(aside) == 1 and aside[0].read_bytes() == garbage  # kept, byte for byte
    store = Store(tmp_path)
    assert history.count(store) == 1 and history.get(store, rid).operator == "add_bias"
    assert not store.notices


def test_a_store_with_a_damaged_page_is_replaced_without_a_crash(report, tmp_path, capsys):
    store = Store(tmp_path)
    for _ in range(50):
        history.record_run(report, "run", store)
    store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    store.close()
    path = store.path
    data = bytearray(path.read_bytes())
    data[100:4096] = b"\xff" * (4096 - 100)  # the schema page
    path.write_bytes(bytes(data))
    code = cli_main(["bench", "--history", "add_bias"])
    captured = capsys.readouterr()
    assert code == 0
    assert "unreadable" in captured.err
    assert "no recorded runs" in captured.out
    assert list(path.parent.glob("store.corrupt-*"))


def test_the_trend_leaves_tuning_trials_out(report):
    store = Store()
    history.record_run(report, "run", store)
    history.record_run(report, "tune", store)
    history.record_run(report, "bench", store)
    kinds = [r.kind for r in history.runs(store, "add_bias", "default", "ascend910b", history.TREND_KINDS)]
    assert kinds == ["run", "bench"]
    assert [r.kind for r in history.runs(store, "add_bias")] == ["run", "tune", "bench"]
    assert [r.kind for r in history.runs(store, "add_bias", limit=1)] == ["bench"]


def test_a_store_replaced_by_another_process_meanwhile_is_not_moved_again(tmp_path, monkeypatch):
    path = tmp_path / ".asc-tui" / "store.sqlite3"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"garbage" * 100)
    real_connect = Store._connect
    state = {"first": True}

    def connect_late(self):
        # this process read the bad file; meanwhile another one replaces it and records a run
        if state["first"]:
            state["first"] = False
            other = Store(tmp_path)
            history.open_history(other)
            other.close()
            raise sqlite3.DatabaseError("file is not a database")
        return real_connect(self)

    monkeypatch.setattr(Store, "_connect", connect_late)
    store = Store(tmp_path)
    monkeypatch.setattr(Store, "_connect", real_connect)
    assert "another asc-tui process" in store.notices[0]
    assert len(list(path.parent.glob("store.corrupt-*"))) == 1  # only the garbage, once
    assert history.count(store) == 0  # the other process's fresh store, still in place


def test_asc_tui_run_records_its_run(op_path, capsys):
    assert cli_main(["run", str(op_path), "--timing-only"]) == 0
    (rec,) = history.runs(Store(), "add_bias")
    assert rec.kind == "run" and rec.ok and rec.time_us > 0
    assert cli_main(["bench", "add_bias", "--history"]) == 0
    assert "1 runs" in capsys.readouterr().out


def test_a_tuning_report_records_its_best_config(op_path):
    from types import SimpleNamespace

    best = SimpleNamespace(ok=True, params={"tile_length": 1024, "block_dim": 4})
    tuned = SimpleNamespace(
        operator="add_bias", path=str(op_path), case="default", chip="ascend910b", best=best
    )
    rid = history.record_run(tuned, kind="tune")
    rec = history.get(Store(), rid)
    assert rec.kind == "tune" and rec.params["tile_length"] == 1024 and rec.time_us > 0
    nothing = SimpleNamespace(
        operator="add_bias", path=str(op_path), case="default", chip="ascend910b", best=None
    )
    assert history.record_run(nothing, kind="tune") is None
    assert history.count(Store()) == 1


OPENER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from asc_tui.devkit.store import Store
    root, go = sys.argv[1], Path(sys.argv[2])
    while not go.exists():
        time.sleep(0.001)
    Store(root).close()
""")


def test_processes_opening_a_new_store_at_the_same_moment_all_succeed(tmp_path):
    # Switching a new store to WAL takes a lock SQLite does not wait for: before the retry,
    # about 1 in 60 openers failed with "database is locked" (4 processes x 15 rounds).
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    for r in range(3):
        root, go = tmp_path / f"p{r}", tmp_path / f"go{r}"
        root.mkdir()
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", OPENER, str(root), str(go)], stderr=subprocess.PIPE, text=True, env=env
            )
            for _ in range(4)
        ]
        time.sleep(0.5)  # let them import and wait on the same signal
        go.write_text("go")
        for p in procs:
            _, err = p.communicate(timeout=120)
            assert p.returncode == 0, err
        assert Store(root).conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
