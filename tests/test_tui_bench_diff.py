"""The benchmark diff view: baseline and current run side by side, with asc-bench's figures."""

from __future__ import annotations

import asyncio

from tuikit import log_text, make_app, save_atomically, started, until

from asc_tui.devkit.bench.diff import diff_lines
from asc_tui.devkit.bench.figures import BenchRequest, bench
from asc_tui.tui.screens.diff import BenchDiffScreen, diff_text

SLOWER = ("Param(2048, values=[256", "Param(256, values=[256")


def test_bench_row_opens_the_diff_with_the_figures_of_asc_bench_against(one_op):
    async def go():
        app = make_app(one_op)
        async with app.run_test(size=(80, 24)) as pilot:
            await started(pilot, app, n=1)
            await pilot.press("B")
            await until(pilot, lambda: "bench add_custom" in log_text(app), what="baseline saved")
            target = (one_op / "add_custom.py").resolve()
            save_atomically(target, target.read_text().replace(*SLOWER))
            await until(
                pilot, lambda: app.ops[target].good.params.get("tile_length") == 256, what="slower rerun"
            )
            await pilot.press("5")
            table = app.query_one("#bench-table")
            table.move_cursor(row=table.get_row_index("add_custom/default/ascend910b"))
            await pilot.press("enter")
            await until(pilot, lambda: isinstance(app.screen, BenchDiffScreen), what="diff screen")
            shown = app.screen.diff
            cli = bench(BenchRequest(str(target), against="baseline", record=False)).cases[0].diff
            assert cli is not None
            assert (shown.baseline_us, shown.current_us) == (cli.baseline_us, cli.current_us)
            assert shown.categories == cli.categories and shown.lines == cli.lines
            assert shown.lines, "a smaller tile changes what the loop lines cost"
            text = app.screen.plain
            assert f"{cli.baseline_us:.3f} → {cli.current_us:.3f} µs" in text
            for ln in cli.lines[:3]:
                assert f"{ln.delta_us:+.3f} µs" in text
            assert "base│" in text and " now│" in text  # both timelines, one axis
            await pilot.press("escape")
            assert not isinstance(app.screen, BenchDiffScreen)
            await pilot.press("D")  # the same from anywhere, for the selected operator
            await until(pilot, lambda: isinstance(app.screen, BenchDiffScreen), what="diff by key")

    asyncio.run(go())


def test_the_diff_fits_80_columns_without_cutting_a_number(one_op):
    cur = str((one_op / "add_custom.py").resolve())
    bench(BenchRequest(cur, save_baseline="baseline"))
    save_atomically(one_op / "add_custom.py", (one_op / "add_custom.py").read_text().replace(*SLOWER))
    d = bench(BenchRequest(cur, against="baseline", record=False)).cases[0].diff
    for width in (78, 58):
        lines = diff_text(d, width).plain.splitlines()
        assert max(len(x) for x in lines) <= width
        for c in d.categories:
            assert f"{c.after_us:8.3f}" in diff_text(d, width).plain
    assert any("vs baseline 'baseline'" in x for x in diff_lines(d))
