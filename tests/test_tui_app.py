"""The workbench driven by real key presses (App.run_test); assertions on what panes show."""

from __future__ import annotations

import asyncio
import gc
import time

from tuikit import SLOW, SRC, copy_bug, log_text, make_app, save_atomically, started, until

from asc_tui.config import Config


def test_start_runs_every_operator_and_marks_them(ops):
    async def go():
        app = make_app(ops)
        async with app.run_test(size=(100, 30)) as pilot:
            await started(pilot, app)
            tree = app.query_one("#sidebar")
            assert {tree.status(p) for p in tree.paths()} == {"pass"}
            status = str(app.query_one("#status").render())
            assert "add_custom [default]" in status and "PASS" in status and "µs" in status
            assert "add_twice: precision PASS" in log_text(app)
            assert getattr(app, "dropped_messages", 0) == 0  # nothing lost while running

    asyncio.run(go())


def test_what_the_app_holds_at_start_is_left_out_of_garbage_collection_until_it_quits(ops):
    """Once the engine is up, the objects alive then (modules, classes, widgets) are frozen:
    a full collection no longer walks them (it blocked the UI 40-120 ms while a big result
    was prepared); quitting gives them back to the collector."""

    async def go():
        app = make_app(ops)
        async with app.run_test(size=(100, 30)) as pilot:
            await started(pilot, app)
            assert gc.get_freeze_count() > 10_000
        assert gc.get_freeze_count() == 0

    asyncio.run(go())


def test_quitting_while_the_engine_starts_leaves_no_worker_or_thread_behind(ops):
    async def go():
        app = make_app(ops)
        async with app.run_test(size=(100, 30)):
            while app.first_paint_at is None:
                await asyncio.sleep(0.001)
        return app

    app = asyncio.run(go())  # (quit at the first frame: the engine is still being imported)
    deadline = time.monotonic() + 20
    while (app.rerunner is None or app.worker is None) and time.monotonic() < deadline:
        time.sleep(0.05)
    threads = [app.rerunner._thread, *(lane.thread for lane in app.rerunner._lanes)]
    for t in threads:
        t.join(5)
    assert not any(t.is_alive() for t in threads) and app.worker._closed
    assert app.watcher is None or not app.watcher._thread.is_alive()


def test_tab_keys_and_timeline_zoom_pan_block_keys(ops):
    async def go():
        app = make_app(ops)
        async with app.run_test(size=(100, 30)) as pilot:
            await started(pilot, app)
            await pilot.press("3")
            tl = app.query_one("#timeline-view")
            assert app.query_one("#tabs").active == "timeline" and tl.has_focus
            assert "all blocks (avg)" in tl.text() and "mte2" in tl.text()
            await pilot.press("plus", "plus", "right")
            assert tl.zoom == 4 and tl.offset > 0.375
            await pilot.press("greater_than_sign")
            assert tl.text().startswith("block 0/")
            await pilot.press("home")
            assert (tl.zoom, tl.offset) == (1.0, 0.0)
            await pilot.press("2")
            assert "bottleneck" in app.query_one("#profile-pane").plain
            await pilot.press("4")
            assert app.query_one("#source-view").hot_line() is not None

    asyncio.run(go())


def test_next_operator_and_next_case_keys_rerun_with_the_new_case(ops):
    async def go():
        app = make_app(ops)
        async with app.run_test(size=(100, 30)) as pilot:
            await started(pilot, app)
            first = app.selected
            await pilot.press("n")
            assert app.selected != first
            await pilot.press("c")
            await until(
                pilot,
                lambda: app.ops[app.selected].good is not None and app.ops[app.selected].good.case == "tail",
                what="tail case run",
            )
            assert "[tail]" in str(app.query_one("#status").render())
            assert app.query_one("#bench-table").row(f"{app.selected.stem}/tail/ascend910b") is not None

    asyncio.run(go())


def test_keymap_from_config_remaps_and_help_lists_it(ops):
    async def go():
        app = make_app(ops, config=Config(keymap={"rerun": "f5", "nonsense": "f9"}))
        async with app.run_test(size=(100, 30)) as pilot:
            await started(pilot, app)
            seen = app.results_seen
            await pilot.press("f5")
            await until(pilot, lambda: app.results_seen > seen, what="rerun via f5")
            assert "add_custom: rerun" in log_text(app)
            assert "no binding with id 'nonsense'" in log_text(app)
            await pilot.press("question_mark")
            assert ("f5", "Rerun") == app.screen.rows[0][:2]
            await pilot.press("escape")
            assert app.screen.__class__.__name__ != "HelpScreen"

    asyncio.run(go())


def test_saving_an_operator_reruns_it_and_updates_the_panes(ops):
    async def go():
        app = make_app(ops)
        async with app.run_test(size=(100, 30)) as pilot:
            await started(pilot, app)
            await pilot.pause(0.2)  # the watch is installed
            before = app.ops[app.selected].good.emulation.kernel_cycles
            target = ops / "add_custom.py"
            save_atomically(target, SRC.replace("n=8 * 2048 * 8,", "n=8 * 2048 * 16,"))
            await until(
                pilot,
                lambda: app.ops[target.resolve()].good.emulation.kernel_cycles != before,
                what="rerun after atomic save",
            )
            assert app.ops[(ops / "add_twice.py").resolve()].last.report.emulation is not None
            assert "saved add_custom.py → rerun 1 operator(s)" in log_text(app)
            prof = app.query_one("#profile-pane").plain
            em = app.ops[target.resolve()].good.emulation
            assert f"kernel {em.kernel_us:.3f} µs" in prof

    asyncio.run(go())


def test_syntax_error_shows_file_line_and_keeps_the_last_good_result_stale(ops):
    async def go():
        app = make_app(ops)
        async with app.run_test(size=(100, 30)) as pilot:
            await started(pilot, app)
            await pilot.pause(0.2)
            target = (ops / "add_custom.py").resolve()
            good = app.ops[target].good
            target.write_text(SRC.replace("def tensors(case):", "def tensors(case:"))
            await until(
                pilot,
                lambda: f"{target}:47: syntax error" in log_text(app),
                what="the syntax error in the log",
            )
            assert app.ops[target].status == "error"
            assert app.ops[target].good is good and app.ops[target].stale
            assert "STALE" in str(app.query_one("#status").render())
            assert "[STALE]" in app.query_one("#profile-pane").plain

    asyncio.run(go())


def test_infinite_loop_times_out_while_the_keyboard_keeps_working(ops):
    async def go():
        app = make_app(ops, config=Config(worker_timeout=4.0))
        async with app.run_test(size=(100, 30)) as pilot:
            await started(pilot, app)
            await pilot.pause(0.2)
            target = (ops / "add_custom.py").resolve()
            target.write_text(
                SRC.replace("def tensors(case):", "def tensors(case):\n    while True:\n        pass\n")
            )
            await until(pilot, lambda: app.ops[target].status == "running", what="running")
            await pilot.press("3")
            assert app.query_one("#tabs").active == "timeline"
            await pilot.press("n")
            assert app.selected != target
            assert app.ops[target].status == "running"  # keys worked while the run hangs
            await until(pilot, lambda: "did not finish within 4 s" in log_text(app), what="timeout")
            assert app.ops[target].status == "error"
            assert (
                "48 | while True:" in log_text(app)  # the loop's lines, wherever the
                or "49 | pass" in log_text(app)
            )  # stack was sampled

    asyncio.run(go())


def test_the_configs_memory_cap_holds_in_the_workbench_too(ops):
    """worker_memory_mb caps the workbench's worker as it does `asc-tui run`: a 3 GiB
    allocation under a 1 GiB cap is a MemoryError at the user's line, not the machine's."""

    async def go():
        app = make_app(ops, config=Config(worker_timeout=20, worker_memory_mb=1024))
        async with app.run_test(size=(100, 30)) as pilot:
            await started(pilot, app)
            target = (ops / "add_custom.py").resolve()
            big = "    import numpy as np\n    big = np.ones((3 << 30,), np.uint8)\n"
            target.write_text(SRC.replace("def tensors(case):\n", "def tensors(case):\n" + big))
            line = SRC.splitlines().index("def tensors(case):") + 3
            await until(pilot, lambda: app.ops[target].status == "error", what="the failed run")
            assert "MemoryError" in log_text(app) and f"add_custom.py:{line}" in log_text(app)
            save_atomically(target, SRC)
            await until(pilot, lambda: app.ops[target].status == "pass", what="recovery")

    asyncio.run(go())


def test_a_crashing_operator_is_reported_and_the_next_save_works(ops):
    async def go():
        app = make_app(ops)
        async with app.run_test(size=(100, 30)) as pilot:
            await started(pilot, app)
            await pilot.pause(0.2)
            target = (ops / "add_custom.py").resolve()
            target.write_text(
                SRC.replace("def tensors(case):", "def tensors(case):\n    import os\n    os._exit(9)\n")
            )
            await until(pilot, lambda: "died (exit code 9)" in log_text(app), what="crash")
            assert app.ops[target].status == "error"
            save_atomically(target, SRC)
            await until(pilot, lambda: app.ops[target].status == "pass", what="recovery")
            assert not app.ops[target].stale
            assert getattr(app, "dropped_messages", 0) == 0

    asyncio.run(go())


def test_command_palette_runs_actions_by_name(ops):
    async def go():
        app = make_app(ops)
        async with app.run_test(size=(100, 30)) as pilot:
            await started(pilot, app)
            await pilot.press("ctrl+p")
            await pilot.press(*"Run all")
            await pilot.pause(0.3)
            await pilot.press("enter")
            await until(pilot, lambda: "run all (2 operators)" in log_text(app), what="palette action")

    asyncio.run(go())


def test_wide_terminals_show_the_log_as_its_own_pane(ops):
    async def go():
        app = make_app(ops)
        async with app.run_test(size=(160, 48)) as pilot:
            await started(pilot, app)
            assert app.screen.has_class("-wide")
            assert app.query_one("#bottom-log").display
            assert app.query_one("#tabs").active == "profile"
        app = make_app(ops)
        async with app.run_test(size=(80, 24)) as pilot:
            assert not app.screen.has_class("-wide")
            assert app.query_one("#tabs").active == "log"

    asyncio.run(go())


def test_theme_option_and_f2_cycle_the_file_themes(ops):
    async def go():
        app = make_app(ops, theme="light")
        async with app.run_test(size=(100, 30)) as pilot:
            assert app.theme == "light"
            await pilot.press("f2")
            assert app.theme != "light" and app.theme in ("dark", "high-contrast", "light")

    asyncio.run(go())


def test_debug_key_runs_the_sanitizer_in_the_tool_worker(ops):
    async def go():
        app = make_app(ops)
        async with app.run_test(size=(100, 30)) as pilot:
            await started(pilot, app)
            await pilot.press("d")
            await until(
                pilot,
                lambda: "sanitizer clean" in log_text(app) or "debug " in log_text(app),
                what="sanitizer result",
            )
            assert "add_custom: sanitizer clean" in log_text(app)

    asyncio.run(go())


def test_save_baseline_then_bench_fills_the_row_in_place(ops):
    async def go():
        app = make_app(ops)
        async with app.run_test(size=(100, 30)) as pilot:
            await started(pilot, app)
            await pilot.press("B")
            await until(pilot, lambda: "bench add_custom" in log_text(app), what="baseline")
            await pilot.press("b")
            table = app.query_one("#bench-table")
            key = "add_custom/default/ascend910b"
            await until(pilot, lambda: table.row(key).verdict not in ("", "saved"), what="bench verdict")
            assert table.row(key).baseline is not None
            assert table.get_cell(key, "vs base") == "100.0%"

    asyncio.run(go())


def test_precision_key_lists_per_output_figures(ops):
    async def go():
        app = make_app(ops)
        async with app.run_test(size=(100, 30)) as pilot:
            await started(pilot, app)
            await pilot.press("v")
            await until(
                pilot,
                lambda: "add_custom: precision z (float16): PASS  NaN 0, Inf 0, max abs err" in log_text(app),
                what="figures",
            )

    asyncio.run(go())


def test_quick_tune_fills_best_so_far_and_apply_best_reruns_with_it(ops):
    async def go():
        app = make_app(ops)
        async with app.run_test(size=(100, 30)) as pilot:
            await started(pilot, app)
            await pilot.press("T")
            assert app.query_one("#tabs").active == "tune"
            pane = app.query_one("#tune-pane")
            await until(pilot, lambda: pane.status_text.startswith("tune done"), what="tune")
            assert pane.table.row_count >= 1 and pane.best[0][0] <= pane.best[-1][0]
            best = dict(app.ops[app.selected].best_params)
            await pilot.press("a")
            await until(
                pilot, lambda: app.ops[app.selected].good.params == best, what="run with the tuned parameters"
            )
            assert f"block_dim={best['block_dim']}" in str(app.query_one("#status").render())
            await pilot.press("A")  # into the file: the watcher reruns with the new defaults
            src = (ops / "add_custom.py").read_text()
            assert f'"block_dim": Param({best["block_dim"]},' in src
            await until(pilot, lambda: "saved add_custom.py" in log_text(app), what="rerun")

    asyncio.run(go())


def test_cancel_key_stops_a_running_tune(ops):
    (ops / "add_custom.py").write_text(SLOW)

    async def go():
        app = make_app(ops)
        async with app.run_test(size=(100, 30)) as pilot:
            await started(pilot, app)
            await pilot.press("t")
            pane = app.query_one("#tune-pane")
            await until(
                pilot, lambda: "start" in pane.status_text or "result" in pane.status_text, what="tune start"
            )
            await pilot.press("x")
            await until(pilot, lambda: not app.tools.tune.running, what="tune end")
            assert pane.status_text.startswith("tune cancelled")
            assert "cancelled: tune" in log_text(app)

    asyncio.run(go())


def test_export_key_writes_trace_and_report(ops, tmp_path):
    async def go():
        app = make_app(ops)
        app.tools.export.directory = tmp_path / "exports"
        async with app.run_test(size=(100, 30)) as pilot:
            await started(pilot, app)
            await pilot.press("e")
            await until(pilot, lambda: "exported" in log_text(app), what="export")
        files = sorted(p.name for p in (tmp_path / "exports").iterdir())
        assert any(f.endswith(".report.json") for f in files)
        assert any(f.endswith(".report.txt") for f in files)
        assert any(f.endswith(".trace.json") for f in files)

    asyncio.run(go())


def test_chip_key_reruns_on_the_next_chip_and_sidebar_key_hides_the_tree(ops):
    async def go():
        app = make_app(ops)
        async with app.run_test(size=(100, 30)) as pilot:
            await started(pilot, app)
            await pilot.press("C")
            chip = app.chip
            assert chip and f"chip {chip}" in str(app.query_one("#status").render())
            await until(pilot, lambda: app.ops[app.selected].good.chip == chip, what="run on the new chip")
            await pilot.press("o")
            assert not app.query_one("#sidebar").display
            await pilot.press("N")
            assert app.selected.stem == "add_twice"

    asyncio.run(go())


def test_editing_the_config_reloads_it_and_reports_mistakes_with_line_and_column(ops, tmp_path):
    from asc_tui.config import load_config

    cfg = tmp_path / "asc-tui.toml"
    cfg.write_text("worker_timeout = 20\n")

    async def go():
        app = make_app(ops, config=load_config(cfg))
        async with app.run_test(size=(100, 30)) as pilot:
            await started(pilot, app)
            await pilot.pause(0.2)
            cfg.write_text("worker_timeout = 20\ntheme = 3\n")
            await until(
                pilot,
                lambda: f"config error: {cfg}:2:1: theme must be" in log_text(app),
                what="config error in the log",
            )
            cfg.write_text('worker_timeout = 20\n[keymap]\nrerun = "f6"\n')
            await until(pilot, lambda: "config reloaded" in log_text(app), what="reload")
            seen = app.results_seen
            await pilot.press("f6")
            await until(pilot, lambda: app.results_seen > seen, what="rerun via remapped key")

    asyncio.run(go())


def test_debug_key_names_the_out_of_bounds_line_of_a_buggy_kernel(ops):
    copy_bug(ops, "add_tail_oob.py")

    async def go():
        app = make_app(ops)
        async with app.run_test(size=(100, 30)) as pilot:
            await started(pilot, app, 3)
            app.select_operator((ops / "add_tail_oob.py").resolve())
            await pilot.press("d")
            await until(pilot, lambda: "debug found" in log_text(app), what="findings")
            assert f"memcheck: {(ops / 'add_tail_oob.py').resolve()}:" in log_text(app)
            assert app.query_one("#sidebar").status((ops / "add_tail_oob.py").resolve()) == "sanitizer"

    asyncio.run(go())


def test_a_huge_timeline_is_indexed_off_the_ui_thread_then_shown(ops):
    import dataclasses

    import numpy as np

    from asc_tui.devkit.run.runner import RunRequest, run
    from asc_tui.npu.results import BlockTimeline
    from asc_tui.tui.app import BIG_RESULT

    rep = run(RunRequest(str(ops / "add_custom.py"), timing_only=True))
    n = BIG_RESULT + 1000
    s = np.arange(n, dtype=float) * 2
    z = np.zeros(n, dtype=np.int32)
    block = BlockTimeline(
        0,
        0,
        0,
        0.0,
        2.0 * n,
        np.full(n, 4, np.int8),
        s,
        s + 1,
        z,
        z,
        z.astype(np.int64),
        np.zeros(n, np.int8),
        z - 1,
        0.0,
    )
    big = dataclasses.replace(
        rep, emulation=dataclasses.replace(rep.emulation, blocks=(block,), kernel_cycles=2.0 * n)
    )

    async def go():
        app = make_app(ops, run_on_start=False, watch=False)
        async with app.run_test(size=(100, 30)) as pilot:
            path = (ops / "add_custom.py").resolve()
            app.ops[path].good = big
            app.select_operator(path)
            await pilot.press("3")
            view = app.query_one("#timeline-view")
            await until(pilot, lambda: view.model is not None, what="indexed timeline")
            assert "mte2" in view.text() and f"{n:,} instructions" in view.text()

    asyncio.run(go())


def test_profile_key_writes_the_pipeline_report_and_hot_lines_to_the_log(ops):
    async def go():
        app = make_app(ops)
        async with app.run_test(size=(100, 30)) as pilot:
            await started(pilot, app)
            await pilot.press("p")
            await until(pilot, lambda: "add_custom: profile report" in log_text(app), what="report")
            text = log_text(app)
            assert "add_custom: profile report" in text
            assert "MTE2" in text and "add_custom.py:" in text  # breakdown and hot lines

    asyncio.run(go())


def test_timeline_bindings_are_remappable_by_id_too(ops):
    async def go():
        app = make_app(ops, config=Config(keymap={"timeline.zoom_in": "z"}))
        async with app.run_test(size=(100, 30)) as pilot:
            await started(pilot, app)
            await pilot.press("3", "z")
            assert app.query_one("#timeline-view").zoom == 2
            assert "no binding with id" not in log_text(app)

    asyncio.run(go())


def test_debug_key_runs_the_deadlock_check_for_multi_rank_operators(ops):
    copy_bug(ops, "allreduce_skip.py")

    async def go():
        app = make_app(ops)
        async with app.run_test(size=(100, 30)) as pilot:
            await started(pilot, app, 3)
            path = (ops / "allreduce_skip.py").resolve()
            app.select_operator(path)
            await pilot.press("d")
            await until(pilot, lambda: "allreduce_skip: debug found" in log_text(app), what="deadlock report")
            assert "deadlock check (4 ranks): Deadlock detected" in log_text(app)
            assert app.query_one("#sidebar").status(path) == "sanitizer"

    asyncio.run(go())


def test_palette_offers_each_case_and_chip_by_name(ops):
    async def go():
        app = make_app(ops)
        async with app.run_test(size=(100, 30)) as pilot:
            await started(pilot, app)
            await pilot.press("ctrl+p")
            await pilot.press(*"Case: fp32")
            await pilot.pause(0.3)
            await pilot.press("enter")
            await until(pilot, lambda: app.ops[app.selected].good.case == "fp32", what="run on the fp32 case")

    asyncio.run(go())


def test_new_operator_files_appear_and_deleted_ones_leave_the_tree(ops):
    async def go():
        app = make_app(ops)
        async with app.run_test(size=(100, 30)) as pilot:
            await started(pilot, app)
            await pilot.pause(0.2)
            tree = app.query_one("#sidebar")
            (ops / "add_twice.py").unlink()
            gone = (ops / "add_twice.py").resolve()
            await until(pilot, lambda: gone not in tree.paths(), what="gone from the tree")
            assert gone not in app.ops and app.selected != gone
            save_atomically(ops / "add_new.py", SRC)
            new = (ops / "add_new.py").resolve()
            await until(pilot, lambda: tree.status(new) == "pass", what="new operator run")

    asyncio.run(go())


def test_deleting_the_selected_operator_moves_the_selection_and_says_so(ops):
    async def go():
        app = make_app(ops)
        async with app.run_test(size=(100, 30)) as pilot:
            await started(pilot, app)
            await pilot.pause(0.2)
            tree = app.query_one("#sidebar")
            doomed = (ops / "add_custom.py").resolve()
            assert app.selected == doomed
            doomed.unlink()
            await until(pilot, lambda: doomed not in tree.paths(), what="gone from the tree")
            other = (ops / "add_twice.py").resolve()
            assert app.selected == other and tree.cursor_node.data == other
            assert "add_custom.py deleted: now showing add_twice" in log_text(app)
            status = str(app.query_one("#status").render())
            assert status.startswith(" add_twice") or "add_twice [default]" in status
            assert "add_custom" not in status
            assert app.query_one("#bench-table").row("add_custom/default/ascend910b") is None
            await pilot.press("r")
            await until(pilot, lambda: "add_twice: rerun" in log_text(app), what="rerun of the new one")
            assert "not found" not in log_text(app)
            other.unlink()  # the last one: empty panes, nothing selected
            await until(pilot, lambda: not tree.paths(), what="empty tree")
            assert app.selected is None and "no operators left" in log_text(app)
            await pilot.press("r")  # nothing to run, nothing breaks
            assert getattr(app, "dropped_messages", 0) == 0

    asyncio.run(go())
