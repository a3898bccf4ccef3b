"""A result's figures are computed once, off the UI loop for big results: the app answers keys
meanwhile, the panes show the figures when they are ready, and the overlap is computed once."""

from __future__ import annotations

import asyncio
import threading

import pytest
from tuikit import log_text, make_app, until

import asc_tui.devkit.profile.breakdown as breakdown_mod
import asc_tui.devkit.profile.profiler as profile_mod
import asc_tui.devkit.profile.timing as timing_mod
import asc_tui.tui.runs as runs_mod
from asc_tui.devkit.profile.timing import overlap, timing
from asc_tui.devkit.run.runner import RunRequest, run
from asc_tui.devkit.views.profile import line_heat, profile_view
from asc_tui.devkit.views.result import ResultView
from asc_tui.devkit.views.timeline import TimelineModel


@pytest.fixture
def report(ops):
    return run(RunRequest(str(ops / "add_custom.py"), timing_only=False))


@pytest.fixture
def overlap_calls(monkeypatch) -> list[int]:
    """Counts every all-blocks overlap computation (`pipe_totals`, wherever it is imported)."""
    calls: list[int] = []
    real = breakdown_mod.pipe_totals

    def counted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    for mod in (breakdown_mod, profile_mod, timing_mod):
        monkeypatch.setattr(mod, "pipe_totals", counted)
    return calls


def test_a_result_view_has_the_same_figures_as_each_view_computed_alone(report, overlap_calls):
    rv = ResultView(report).prepare(40)
    assert len(overlap_calls) == 1  # the profile's; the timing split and the timeline reuse it
    assert rv.ready and rv.records == sum(len(b) for b in report.emulation.blocks)
    em = report.emulation
    assert rv.pane == profile_view(report)
    assert rv.pane.timing == timing(em) and rv.pane.timing.overlap is not None
    assert rv.heat == line_heat(report) and rv.heat
    alone = TimelineModel(em).prepare(40)
    for block in (None, *range(len(em.blocks))):
        assert rv.timeline.overlap(block) == alone.overlap(block) == overlap(em, block)
    mine, theirs = (m.frame(0.0, alone.kernel_cycles, 40).lanes for m in (rv.timeline, alone))
    assert [(a.pipe, a.busy.tolist(), a.wait.tolist(), a.utilisation) for a in mine] == [
        (b.pipe, b.busy.tolist(), b.wait.tolist(), b.utilisation) for b in theirs
    ]


def _held(monkeypatch) -> tuple[threading.Event, threading.Event]:
    """`ResultView.prepare` waits for `release` (set by the test) once `entered` is set: a
    computation as slow as the test wants, without timing."""
    entered, release = threading.Event(), threading.Event()
    real = ResultView.prepare

    def held(self, width=None):
        entered.set()
        assert release.wait(60), "the test never released the computation"
        return real(self, width)

    monkeypatch.setattr(ResultView, "prepare", held)
    return entered, release


def _select(app, ops, report) -> None:
    """`report` becomes add_custom's newest good result and is selected (as a finished run)."""
    path = (ops / "add_custom.py").resolve()
    app.ops[path].good = report
    app.select_operator(path)


def test_the_app_answers_keys_while_a_results_figures_compute(ops, report, monkeypatch, overlap_calls):
    monkeypatch.setattr(runs_mod, "BIG_RESULT", 0)  # every result is computed in the thread
    entered, release = _held(monkeypatch)

    async def go():
        app = make_app(ops, run_on_start=False, watch=False)
        async with app.run_test(size=(100, 30)) as pilot:
            _select(app, ops, report)
            await until(pilot, entered.is_set, what="the computation to start")
            pane, tabs = app.query_one("#profile-pane"), app.query_one("TabbedContent")
            assert "computing the figures of" in pane.plain and pane.view is None
            await pilot.press("3")  # the UI loop answers while the figures compute
            await until(pilot, lambda: tabs.active == "timeline", what="the timeline tab")
            view = app.query_one("#timeline-view")
            assert view.model is None and "computing the figures of" in view.text()
            await pilot.press("2")
            await until(pilot, lambda: tabs.active == "profile", what="the profile tab")
            assert not release.is_set() and overlap_calls == []  # still computing
            release.set()
            await until(pilot, lambda: pane.view is not None, what="the figures")
            assert pane.view == profile_view(report)  # counts one more overlap: 2 below
            assert "task " in pane.plain and "overlap " in pane.plain and "computing" not in pane.plain
            assert view.model is not None and "mte2" in view.text()
            assert app.query_one("#source-view").hot  # the per-line heat
            assert "failed" not in log_text(app)

    asyncio.run(go())
    assert len(overlap_calls) == 2  # once for the panes, once by the check above


def test_the_overlap_is_computed_once_per_result_whoever_shows_it(ops, overlap_calls):
    async def go():
        app = make_app(ops, watch=False)
        async with app.run_test(size=(100, 30)) as pilot:
            await until(pilot, lambda: app.results_seen >= 2, what="first results")
            await pilot.pause(0.2)
            assert len(overlap_calls) == 1  # the selected operator's result (runs are in a process)
            await pilot.press("3", "2", "1")  # every pane shown again
            app.select_operator(app.selected)
            await pilot.press("p")  # the profile report reuses the panes' profile
            await until(pilot, lambda: "profile report" in log_text(app), what="report")
            await pilot.pause(0.2)
            assert len(overlap_calls) == 1
            other = next(p for p in app.ops if p != app.selected)
            first = app.selected
            app.select_operator(other)  # another result: its own figures, once
            await pilot.press("3", "2")
            await pilot.pause(0.2)
            assert len(overlap_calls) == 2
            app.select_operator(first)  # back: its figures were kept
            await pilot.press("3", "2")
            await pilot.pause(0.2)
            assert len(overlap_calls) == 2

    asyncio.run(go())


def test_a_result_whose_figures_fail_says_so_and_the_app_goes_on(ops, report, monkeypatch):
    monkeypatch.setattr(runs_mod, "BIG_RESULT", 0)

    def broken(self, width=None):
        raise RuntimeError("figures are broken")

    monkeypatch.setattr(ResultView, "prepare", broken)

    async def go():
        app = make_app(ops, run_on_start=False, watch=False)
        async with app.run_test(size=(100, 30)) as pilot:
            _select(app, ops, report)
            pane = app.query_one("#profile-pane")
            await until(pilot, lambda: "could not be computed" in pane.plain, what="the failure")
            failed = "result figures failed: RuntimeError: figures are broken"
            await until(pilot, lambda: failed in log_text(app), what="the error in the log")
            assert app.runs.views == {}  # shown again, it is tried again
            await pilot.press("3")
            assert "could not be computed" in app.query_one("#timeline-view").text()

    asyncio.run(go())


def test_kept_figures_are_the_operators_current_results_within_the_budget(ops, monkeypatch):
    """Going back to an operator's result reuses its figures; a result replaced by a newer
    run, or beyond KEPT_RECORDS, is let go (a view holds its whole result)."""

    async def go():
        app = make_app(ops, watch=False)
        async with app.run_test(size=(100, 30)) as pilot:
            await until(pilot, lambda: app.results_seen >= 2, what="first results")
            first = app.selected
            other = next(p for p in app.ops if p != first)
            app.select_operator(other)
            await pilot.pause(0.1)
            views = app.runs.views
            assert set(views) == {id(app.ops[p].good.emulation) for p in (first, other)}
            replaced = app.ops[first].good
            app.ops[first].good = run(RunRequest(str(first), timing_only=True))  # a newer run
            app.select_operator(first)
            await pilot.pause(0.1)
            assert id(replaced.emulation) not in views and len(views) == 2
            monkeypatch.setattr(runs_mod, "KEPT_RECORDS", 0)
            app.select_operator(other)
            app.select_operator(first)  # its figures were kept: nothing new to keep
            assert len(views) == 2
            app.ops[first].good = run(RunRequest(str(first), timing_only=True))
            app.select_operator(first)  # a new view over the budget: only it stays
            await pilot.pause(0.1)
            assert list(views) == [id(app.ops[first].good.emulation)]

    asyncio.run(go())


def test_a_let_go_view_does_not_count_against_the_budget(monkeypatch):
    """Views dropped as no longer any operator's result take no share of KEPT_RECORDS: an older
    live view that fits stays."""
    from types import SimpleNamespace

    monkeypatch.setattr(runs_mod, "KEPT_RECORDS", 100)
    a, b, c = (SimpleNamespace(name=n) for n in "abc")
    ops = {}
    results = object.__new__(runs_mod.RunResults)
    results.app, results.views = SimpleNamespace(ops=ops), {}
    for name, em, n in (("x", a, 40), ("y", b, 50)):
        ops[name] = SimpleNamespace(good=SimpleNamespace(emulation=em))
        results._keep(id(em), SimpleNamespace(records=n))
    assert list(results.views) == [id(a), id(b)]  # 90 records: both fit
    ops["y"] = SimpleNamespace(good=SimpleNamespace(emulation=c))  # y's result b is replaced by c
    results._keep(id(c), SimpleNamespace(records=50))
    assert list(results.views) == [id(a), id(c)]  # b let go; a (40) fits beside c (50)
