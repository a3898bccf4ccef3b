"""Every workbench action: its binding id, default keys, action name and help text.

Binding ids are what `[tool.asc-tui.keymap]` remaps (`rerun = "f5"`); the command palette and
the `?` help screen are generated from the same table, so a key never goes undocumented.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.binding import Binding


@dataclass(frozen=True)
class ActionSpec:
    id: str
    keys: str
    action: str
    title: str
    help: str
    footer: bool = False


ACTIONS: tuple[ActionSpec, ...] = (
    ActionSpec("rerun", "r", "rerun", "Rerun", "Run the selected operator again", True),
    ActionSpec("run_all", "R", "run_all", "Run all", "Run every operator"),
    ActionSpec("next_operator", "n", "next_operator", "Next operator", "Select the next operator"),
    ActionSpec("prev_operator", "N", "prev_operator", "Previous operator", "Select the previous operator"),
    ActionSpec("next_case", "c", "next_case", "Case", "Switch to the operator's next case", True),
    ActionSpec("next_chip", "C", "next_chip", "Chip", "Switch to the next chip model"),
    ActionSpec(
        "profile", "p", "tool('profile')", "Profile", "Profile report: breakdown, bottleneck, advice", True
    ),
    ActionSpec(
        "debug",
        "d",
        "tool('debug')",
        "Debug",
        "Sanitizer run (bounds, races, init, sync) + precision; deadlock check if RANKS",
    ),
    ActionSpec(
        "precision", "v", "tool('precision')", "Precision", "Precision check against the golden model"
    ),
    ActionSpec("bench", "b", "tool('bench')", "Bench", "Benchmark against the baseline", True),
    ActionSpec(
        "save_baseline",
        "B",
        "tool('bench', 'save')",
        "Save baseline",
        "Save the current result as the baseline",
    ),
    ActionSpec(
        "bench_diff",
        "D",
        "bench_diff",
        "Bench diff",
        "Baseline vs current side by side: breakdown, timelines, changed lines (enter on a Bench row)",
    ),
    ActionSpec("tune", "t", "tool('tune')", "Tune", "Auto-tune the operator's parameters", True),
    ActionSpec("quick_tune", "T", "tool('tune', 'quick')", "Quick tune", "Quick tune (small budget)"),
    ActionSpec("cancel", "x", "cancel", "Cancel", "Cancel the run or tuning in flight", True),
    ActionSpec(
        "apply_best",
        "a",
        "tool('tune', 'apply_best')",
        "Apply best",
        "Use the best tuned parameters for the next runs",
    ),
    ActionSpec(
        "write_best",
        "A",
        "tool('tune', 'write_best')",
        "Write best",
        "Write the best tuned parameters into the operator file (PARAMS defaults)",
    ),
    ActionSpec("export", "e", "tool('export')", "Export", "Export the trace (Chrome JSON) and a report"),
    ActionSpec("theme", "f2", "next_theme", "Theme", "Switch to the next theme"),
    ActionSpec("sidebar", "o", "toggle_sidebar", "Operators", "Show or hide the operator tree"),
    ActionSpec("tab_log", "1", "show_tab('log')", "Log tab", "Show the build & emulation log"),
    ActionSpec("tab_profile", "2", "show_tab('profile')", "Profile tab", "Show the profile"),
    ActionSpec("tab_timeline", "3", "show_tab('timeline')", "Timeline tab", "Show the pipeline timeline"),
    ActionSpec("tab_source", "4", "show_tab('source')", "Source tab", "Show the source heat"),
    ActionSpec("tab_bench", "5", "show_tab('bench')", "Bench tab", "Show the benchmarks"),
    ActionSpec("tab_tune", "6", "show_tab('tune')", "Tune tab", "Show the tuning pane"),
    ActionSpec("help", "question_mark", "help", "Help", "List every key", True),
    ActionSpec("quit", "q", "quit", "Quit", "Leave the workbench", True),
)

BY_ID = {a.id: a for a in ACTIONS}


_KEY_NAMES = {
    "question_mark": "?",
    "plus": "+",
    "minus": "-",
    "equals_sign": "=",
    "greater_than_sign": ">",
    "less_than_sign": "<",
    "full_stop": ".",
    "comma": ",",
    "left": "←",
    "right": "→",
}


def display_keys(keys: str) -> str:
    """Textual key names as people type them: "question_mark" → "?", "a,b" → "a / b"."""
    return " / ".join(_KEY_NAMES.get(k.strip(), k.strip()) for k in keys.split(","))


def app_bindings() -> list[Binding]:
    return [Binding(a.keys, a.action, a.title, show=a.footer, id=a.id) for a in ACTIONS]


def unknown_ids(keymap: dict[str, str], extra_ids: set[str] = frozenset()) -> list[str]:
    """Ids in a user keymap that no binding has (typos are reported, not silently ignored)."""
    return sorted(k for k in keymap if k not in BY_ID and k not in extra_ids)
