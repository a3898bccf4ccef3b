"""Static pruning: invalid configs are rejected with a reason and never emulated."""

from __future__ import annotations

from tunesrc import tune_op_source

from asc_tui.devkit.run.loader import load_operator
from asc_tui.devkit.tune import TuneRequest, build_space, config_key, tune
from asc_tui.devkit.tune import evaluate as evaluate_mod
from asc_tui.devkit.tune.space import fit_declared
from asc_tui.npu.chip import load_chip


def _space(path, **fixed):
    return build_space(load_operator(path), None, load_chip(None), fixed)


def test_space_is_the_product_of_param_values(write_operator):
    sp = _space(write_operator("op", tune_op_source()))
    assert sp.size == 5 * 2 * 3
    assert len(sp.valid) + len(sp.invalid) == sp.size


def test_constraint_violations_are_pruned_with_the_authors_reason(write_operator):
    sp = _space(write_operator("op", tune_op_source(refused=1024)))
    refused = [p for p in sp.invalid if p.params["tile"] == 1024]
    assert len(refused) == 6
    assert all("tile 1024 is refused by the author" in p.reason for p in refused)


def test_tiling_errors_prune_and_name_the_operator_line(write_operator):
    path = write_operator("op", tune_op_source(tiling_refuses=4096))
    sp = _space(path)
    bad = [p for p in sp.invalid if p.params["tile"] == 4096]
    assert bad and all(p.reason.startswith("tiling:") for p in bad)
    line = path.read_text().splitlines()[bad[0].line - 1]
    assert "raise ValueError" in line


def test_buffers_that_overflow_ub_are_pruned_by_the_dry_run(write_operator):
    path = write_operator("op", tune_op_source())
    sp = _space(path)
    over = {(p.params["tile"], p.params["bufs"]) for p in sp.invalid if "UB" in p.reason}
    assert over == {(65536, 2), (131072, 1), (131072, 2)}
    one = next(p for p in sp.invalid if "UB" in p.reason)
    assert "InitBuffer" in path.read_text().splitlines()[one.line - 1]
    fits = [c for c in sp.valid if c.params["tile"] == 65536]
    assert fits and all(c.memory["ub"] == 131072 for c in fits)


def test_declared_local_memory_is_checked_against_the_chip_without_a_dry_run(write_operator):
    src = tune_op_source() + ("\n\ndef local_memory(case, p):\n    return {'ub': [p.tile * 2] * p.bufs}\n")
    sp = _space(write_operator("op", src))
    over = {(p.params["tile"], p.params["bufs"]) for p in sp.invalid if "UB needs" in p.reason}
    assert over == {(65536, 2), (131072, 1), (131072, 2)}


def test_fit_declared_rounds_each_buffer_up_to_the_alignment():
    chip = load_chip(None)
    memory, reason = fit_declared({"l0a": [100, 100]}, chip)
    assert memory["l0a"] == 2 * chip.alignment["l0a"] and reason is None
    _, reason = fit_declared({"l0c": chip.usable["l0c"] + 1}, chip)
    assert reason and "L0C" in reason


def test_pinned_params_narrow_the_space(write_operator):
    sp = _space(write_operator("op", tune_op_source()), tile="256,65536", block_dim=4)
    assert sp.values["tile"] == (256, 65536) and sp.values["block_dim"] == (4,)
    assert sp.size == 2 * 2 * 1


def test_invalid_configs_are_never_emulated(write_operator, monkeypatch):
    path = write_operator("op", tune_op_source())
    seen = []
    real = evaluate_mod.evaluate

    def spy(task):
        seen.append(task.key)
        return real(task)

    monkeypatch.setattr(evaluate_mod, "evaluate", spy)
    report = tune(TuneRequest(str(path), workers=0))
    invalid = {config_key(p.params) for p in report.invalid}
    assert seen and invalid and not invalid & set(seen)
    assert report.evaluated == len(seen) == report.space_size - len(report.invalid)
    assert all(o.ok for o in report.outcomes)


def test_matmul_configs_that_overflow_l0_are_never_emulated(monkeypatch):
    seen = []
    real = evaluate_mod.evaluate
    monkeypatch.setattr(evaluate_mod, "evaluate", lambda task: seen.append(task.key) or real(task))
    fixed = {"tile_m": "128,256", "tile_n": "128,256", "tile_k": "256", "block_dim": "24"}
    report = tune(TuneRequest("matmul", workers=0, fixed=fixed))
    reasons = " ".join(p.reason for p in report.invalid)
    assert "L0A" in reasons and "L0B" in reasons
    assert not {config_key(p.params) for p in report.invalid} & set(seen)
    assert len(seen) == report.space_size - len(report.invalid) == report.evaluated
