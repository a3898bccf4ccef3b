"""The README's captured outputs and figures are what the commands print today.

`tests/readme_outputs.py` holds the markers' rules and regenerates the README
(`python tests/readme_outputs.py --write`); these tests run its fast blocks and figures (the slow
ones are checked with `--all`), then check the checker itself on small made-up READMEs.
"""

from __future__ import annotations

import pytest
import readme_outputs as ro

README = ro.parse(ro.README.read_text(encoding="utf-8"))
FIX = "\n(python tests/readme_outputs.py --write regenerates the README)"


@pytest.fixture(scope="module")
def results() -> dict[str, ro.Result]:
    return ro.run_commands(ro.sequences_for(README))


def test_the_readme_marks_the_outputs_readers_check_first():
    """The markers cannot quietly disappear: the figures the issue found drifting stay checked."""
    commands = {c.line for b in README.outputs if not b.slow for c in b.commands}
    assert {
        "asc-tui --version",
        "asc-tui run add_custom",
        "asc-tui chips",
        "asc-debug bugs/softmax_no_max",
        "asc-tui bench matmul",
    } <= commands
    names = ro._figure_names(README)
    assert {"add_custom.task_us", "add_custom.instructions", "matmul.vs_official"} <= names


@pytest.mark.parametrize("block", [b for b in README.outputs if not b.slow], ids=lambda b: b.name)
def test_output_block_is_what_its_commands_print(block, results):
    new = ro.render(block, results)
    assert ro.normal(new) == ro.normal(block.text), ro.Drift(block.name, block.text, new).diff() + FIX


@pytest.mark.parametrize("block", README.figure_blocks, ids=lambda b: f"README.md:{b.line}")
def test_workbench_capture_shows_the_commands_figures(block, results):
    _, drifts = ro.check_figure_block(block, results)
    assert not drifts, "\n".join(d.diff() for d in drifts) + FIX


def test_figures_in_the_prose_are_the_commands(results):
    drifts = [
        f"README.md:{i.line}: {i.name} reads {i.text}, the command prints {ro.figure(i.name, results)}"
        for i in README.inlines
        if not ro.is_slow(i.name) and i.text != ro.figure(i.name, results)
    ]
    assert not drifts, "\n".join(drifts) + FIX


# -- the checker itself, on made-up READMEs and outputs (no commands run) ---------------------

RUN = ro.FIGURES["add_custom.task_us"].command
BLOCK = """intro
<!-- readme-output
$ asc-tui run add_custom
-->
```
$ asc-tui run add_custom
  ok  build         11.4 ms  add_custom
  task 5.706 us = kernel 2.706 us (4,871 cycles @ 1800 MHz)
```
<!-- /readme-output -->
Takes <!-- figure: add_custom.task_us -->5.706<!-- /figure --> µs.
<!-- readme-figures
· task {} µs · = add_custom.task_us
-->
```
 add_custom [default] · PASS · task 5.706 µs · chip ascend910b
```
"""


def output(task: str = "5.706", build: str = "11.4") -> dict[str, ro.Result]:
    text = (
        f"  ok  build        {build} ms  add_custom\n"
        f"  task {task} us = kernel 2.706 us (4,871 cycles @ 1800 MHz)"
    )
    return {RUN: ro.Result(text, 0)}


def test_nothing_drifts_when_the_command_prints_what_the_readme_shows():
    text, drifts = ro.update(ro.parse(BLOCK), output())
    assert drifts == [] and text == BLOCK


def test_host_timings_are_not_drift_and_are_kept():
    text, drifts = ro.update(ro.parse(BLOCK), output(build="987.6"))
    assert drifts == [] and text == BLOCK


def test_a_changed_figure_is_drift_in_the_block_the_prose_and_the_capture():
    text, drifts = ro.update(ro.parse(BLOCK), output(task="6.100"))
    assert len(drifts) == 3
    assert "5.706" not in text and text.count("6.100") == 3
    assert ro.update(ro.parse(text), output(task="6.100"))[1] == []


def test_a_capture_rule_that_matches_nothing_is_drift():
    readme = ro.parse(BLOCK.replace("· task 5.706 µs ·", "· time 5.706 µs ·"))
    _, drifts = ro.check_figure_block(readme.figure_blocks[0], output())
    assert len(drifts) == 1 and "no `" in drifts[0].where


def test_an_exit_status_other_than_the_markers_fails():
    results = {RUN: ro.Result(output()[RUN].stdout, 1)}
    with pytest.raises(AssertionError, match="exited 1, the README says 0"):
        ro.update(ro.parse(BLOCK), results)


def test_keep_and_drop_leave_one_elision_per_gap():
    lines = ["head", "  a", "  b", "  c", "tail"]
    assert ro._shown(lines, ro.Command("x", drop=r"^  [ab]")) == ["head", "  ...", "  c", "tail"]
    assert ro._shown(lines, ro.Command("x", keep=r"^\S")) == ["head", "  ...", "tail"]
    assert ro._shown(lines, ro.Command("x", keep=r"^\S", elide=False)) == ["head", "tail"]
    assert ro._shown(lines, ro.Command("x", head=2)) == ["head", "  a", "..."]


def test_unknown_markers_are_refused():
    with pytest.raises(ValueError, match="unknown figure"):
        ro.parse("<!-- figure: no.such -->1<!-- /figure -->")
    with pytest.raises(ValueError, match="option"):
        ro.parse(BLOCK.replace("$ asc-tui run add_custom\n-->", "$ asc-tui run add_custom\ncolour: red\n-->"))
