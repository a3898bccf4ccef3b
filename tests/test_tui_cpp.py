"""The workbench with a C++ operator: the tree marks its language, it runs, the Source tab shows C++."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

from tuikit import log_text, make_app, until

CPP = Path(__file__).resolve().parents[1] / "operators" / "cpp"


def test_the_tree_marks_a_cpp_operator_which_runs_and_shows_its_cpp_source(ops):
    (ops / "cpp").mkdir()
    for f in ("add_custom.asc", "add_custom.py", "add_custom_tiling.h", "kernel_utils.h"):
        shutil.copy(CPP / f, ops / "cpp" / f)
    kernel = (ops / "cpp" / "add_custom.asc").resolve()

    async def go():
        app = make_app(ops)
        async with app.run_test(size=(120, 40)) as pilot:
            await until(pilot, lambda: app.results_seen >= 3, what="first results")
            tree = app.query_one("#sidebar")
            assert kernel in tree.paths()
            labels = {p: tree._op_nodes[p].label.plain for p in tree.paths()}
            assert "add_custom" in labels[kernel] and "C++" in labels[kernel], labels
            python = (ops / "add_custom.py").resolve()
            assert labels[python].endswith("add_custom"), labels  # Python, the default, is unmarked
            for _ in range(len(labels)):
                if app.selected == kernel:
                    break
                await pilot.press("n")
            assert app.selected == kernel
            await pilot.press("c")  # the next case: a new run of the C++ operator
            await until(
                pilot,
                lambda: (good := app.ops[kernel].good) is not None and good.case == "tail",
                what="the C++ operator's tail run",
            )
            assert app.ops[kernel].good.passed
            await pilot.press("4")
            assert app.query_one("#tabs").active == "source"
            source = app.query_one("#source-view").body.render()
            text = source.plain if hasattr(source, "plain") else str(source)
            assert "add_custom.asc" in text and "AscendC::DataCopy" in text and "__aicore__" in text

    asyncio.run(go())


def test_a_broken_cpp_save_names_its_line_and_column_and_keeps_the_last_good_result_stale(ops):
    for f in ("add_custom.asc", "add_custom.py", "add_custom_tiling.h", "kernel_utils.h"):
        shutil.copy(CPP / f, ops / f)
    kernel = (ops / "add_custom.asc").resolve()
    src = kernel.read_text()
    lines = src.splitlines(True)
    at = next(i for i, ln in enumerate(lines) if "void Process" in ln) + 1  # first line of its body
    broken = "".join(lines[: at + 1]) + "        auto f = [&]() { return 1; };\n" + "".join(lines[at + 1 :])

    async def go():
        app = make_app(ops)
        async with app.run_test(size=(120, 40)) as pilot:
            await until(
                pilot, lambda: (st := app.ops.get(kernel)) is not None and st.good is not None, what="run"
            )
            good = app.ops[kernel].good
            kernel.write_text(broken)
            where = f"add_custom.asc:{at + 2}:"
            await until(pilot, lambda: where in log_text(app), what="the C++ error with its line in the log")
            assert "lambda" in log_text(app)
            assert app.ops[kernel].good is good and app.ops[kernel].stale  # the panes keep it, marked

    asyncio.run(go())
