"""The tool controllers against a fake `WorkbenchHost` (tui/host.py): what they use of the app
is the protocol, so a controller runs, logs and notifies without a Textual app."""

from __future__ import annotations

import math
from pathlib import Path
from types import SimpleNamespace

from asc_tui.devkit.precision import OutputPrecision, PrecisionReport
from asc_tui.tui.host import WorkbenchHost
from asc_tui.tui.tools.precision import PrecisionController, PrecisionReady


class FakePane:
    def __init__(self):
        self.lines: list[tuple[str, str]] = []

    def add_lines(self, name, lines):
        self.lines += [(name, ln.text) for ln in lines]


class FakeHost:
    """Only what the protocol names: a session with no operator selected and one log pane."""

    def __init__(self):
        self.config, self.chip, self.ops, self.selected = SimpleNamespace(), None, {}, None
        self.runs, self.watch_enabled = None, False
        self.log, self.notices, self.panes = [], [], [FakePane()]

    workbench_screen = size = None

    def pane(self, selector, expect_type=None):
        raise AssertionError("no pane asked for")

    def log_line(self, text, level=None):
        self.log.append(text)

    def log_panes(self):
        return self.panes

    def notify(self, message, *, title="", severity="information", timeout=None):
        self.notices.append((message, severity))

    def post_message(self, message):
        return True

    def submit(self, paths, front=True):
        return True

    def update_status(self):
        pass

    def clear_failure(self):
        pass

    def run_in_thread(self, work, name, group, exclusive=False):
        work()


def _output(**kw) -> OutputPrecision:
    base = dict(name="y", dtype="float16", max_abs_error=math.inf, mean_rel_error=math.nan)
    base |= dict(cosine_similarity=math.nan, within_threshold=False, atol=1e-3, rtol=1e-3)
    base |= dict(nan=668, inf=0, verdict="FAIL")
    return OutputPrecision(**(base | kw))


def test_a_controller_shows_its_result_through_the_host_alone():
    host = FakeHost()
    report = PrecisionReport((_output(),))
    PrecisionController(host).show(PrecisionReady(Path("softmax_no_max.py"), report))
    (pane,) = host.panes
    text = "\n".join(t for _, t in pane.lines)
    assert "precision y (float16): FAIL  NaN 668" in text and "cosine nan" in text


def test_a_tool_key_with_no_operator_selected_notifies_through_the_host():
    host = FakeHost()
    PrecisionController(host).start()
    assert host.notices == [("no operator selected", "warning")]


def test_the_workbench_provides_everything_the_protocol_names(tmp_path):
    from asc_tui.tui.app import Workbench

    app = Workbench(str(tmp_path), watch=False, run_on_start=False)
    names = {n for n in WorkbenchHost.__annotations__} | {
        n
        for n, v in vars(WorkbenchHost).items()
        if not n.startswith("_") and (callable(v) or isinstance(v, property))
    }
    missing = sorted(n for n in names if not hasattr(Workbench, n) and n not in vars(app))
    assert missing == []
    assert {"log_line", "pane", "run_in_thread", "config", "ops"} <= names
