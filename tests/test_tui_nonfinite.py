"""The workbench on results whose figures are NaN, Inf or missing: it stays up on every pane.

The bundled `bugs/softmax_no_max.py` overflows fp16 and writes NaN; its precision report has
NaN/Inf figures (and `to_dict()` nulls). The workbench once died on it with `TypeError:
unsupported format string passed to NoneType.__format__`. Here it is opened for real, its log must
show the NaN count and where the first NaN/Inf came from, and then the same run with Inf figures
and with every figure missing is driven through every pane by the tab keys.
"""

from __future__ import annotations

import asyncio
import dataclasses
import shutil
from pathlib import Path

from tuikit import log_text, make_app, until

from asc_tui.devkit.precision import OutputPrecision, PrecisionReport
from asc_tui.devkit.run.runner import RunReport, Stage
from asc_tui.tui.messages import RunFinished

BUG = Path(__file__).parents[1] / "operators" / "bugs" / "softmax_no_max.py"
#: The tab keys (keymap.py: tab_log ... tab_tune) and the pane each one shows.
TABS = [("1", "log"), ("2", "profile"), ("3", "timeline"), ("4", "source"), ("5", "bench"), ("6", "tune")]

INF = OutputPrecision(
    "y", "float16", float("inf"), float("inf"), float("nan"), False, 1e-3, 1e-3, 0, 12, "FAIL",
    [(3, float("inf"), 0.5), (7, float("-inf"), 0.25)], "Inf 12 in the output where the golden is finite",
    "Inf 12 in the output where the golden is finite",
)  # fmt: skip
NONE = OutputPrecision(
    "y", "float16", None, None, None, False, None, None, None, None, "FAIL", [(0, None, None)], "", None
)  # fmt: skip


def _bare(path: Path) -> RunReport:
    """A report with every optional field missing: no case, chip, block_dim, emulation or times."""
    return RunReport(
        operator=path.stem,
        path=None,
        case=None,
        chip=None,
        params={},
        block_dim=None,
        stages=(Stage("build", None, False, None),),
        emulation=None,
        precision=PrecisionReport((NONE,)),
        errors=(),
    )


async def _every_pane(pilot, app, what: str) -> None:
    """Every tab by its key, then the precision figures (v): the app answers each one."""
    for key, tab in TABS:
        await pilot.press(key)
        await pilot.pause()
        assert app.is_running, f"the app exited on the {tab} tab with {what}"
        assert app.query_one("#tabs").active == tab
    await pilot.press("v")
    await pilot.pause(0.2)
    assert app.is_running, f"the app exited on the precision figures of {what}"


def test_the_nan_operator_opens_shows_its_nan_count_and_origin_and_every_pane_survives_nan_inf_and_none(
    tmp_path,
):
    ops = tmp_path / "ops"
    ops.mkdir()
    shutil.copy(BUG, ops / BUG.name)
    path = (ops / BUG.name).resolve()

    async def go():
        app = make_app(ops)
        async with app.run_test(size=(120, 36)) as pilot:
            await until(pilot, lambda: app.results_seen >= 1, timeout=60, what="the first run")
            st = app.ops[path]
            log = log_text(app)
            assert "softmax_no_max: precision FAIL: NaN 668, Inf 0, max abs err inf" in log
            assert "cosine nan" in log
            assert "softmax_no_max: first NaN/Inf: Exp overflowed to inf at softmax_no_max.py:64" in log
            assert "softmax_no_max: verdict FAIL" in log
            assert app.query_one("#sidebar").status(path) == "fail"
            await _every_pane(pilot, app, "NaN figures")

            real = st.last
            inf = dataclasses.replace(real.report, precision=PrecisionReport((INF,)), nonfinite=None)
            missing = dataclasses.replace(real.report, precision=PrecisionReport((NONE,)), nonfinite=None)
            for what, report in [
                ("Inf figures", inf),
                ("missing figures", missing),
                ("no figures", _bare(path)),
            ]:
                seen = app.results_seen
                app.post_message(RunFinished(path, dataclasses.replace(real, report=report)))
                await until(pilot, lambda seen=seen: app.results_seen > seen, what=what)
                await _every_pane(pilot, app, what)
            log = log_text(app)
            assert "precision FAIL: NaN 0, Inf 12, max abs err inf, mean rel err inf, cosine nan" in log
            assert "precision y (float16): FAIL  NaN 0, Inf 12, max abs err inf" in log
            assert "[7] got -inf want 0.25" in log
            assert "precision FAIL: NaN n/a, Inf n/a, max abs err n/a, mean rel err n/a, cosine n/a" in log
            assert (
                "precision y (float16): FAIL  NaN n/a, Inf n/a, max abs err n/a (atol n/a, rtol n/a)" in log
            )
            assert "softmax_no_max: ERR build" in log
            assert app.is_running

    asyncio.run(go())
