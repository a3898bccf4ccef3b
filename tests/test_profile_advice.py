"""Advice rules: they fire on the kernels they describe and stay quiet on the fixed twin."""

from __future__ import annotations

from dataclasses import replace

import pytest

from asc_tui.devkit.profile import advice as rules
from asc_tui.devkit.profile.profiler import profile
from asc_tui.devkit.run.runner import RunRequest, run


def _rules(op: str, **params) -> set[str]:
    p = profile(run(RunRequest(op, params=params, timing_only=True)))
    return {a.rule for a in p.pipeline.advice}


@pytest.mark.parametrize("op", ["add_custom", "vector_add_bias"])
def test_serial_copy_compute_fires_on_single_buffering_only(op):
    assert "serial_copy_compute" in _rules(op, buffer_num=1)
    assert "serial_copy_compute" not in _rules(op, buffer_num=2)


def test_single_buffered_advice_names_the_fix_and_the_evidence():
    p = profile(run(RunRequest("add_custom", params={"buffer_num": 1}, timing_only=True)))
    a = next(a for a in p.pipeline.advice if a.rule == "serial_copy_compute")
    assert "BUFFER_NUM=2" in a.message
    assert a.evidence["overlap"] < rules.OVERLAP_MIN
    assert a.evidence["producer_wait_ratio"] >= rules.PRODUCER_WAIT_MIN
    assert a.severity == "high"


def test_idle_cores_fires_when_most_cores_sit_idle():
    assert "idle_cores" in _rules("add_custom", block_dim=8)
    assert "idle_cores" not in _rules("add_custom", block_dim=48)


def test_small_dma_fires_on_small_tiles_not_on_large_ones():
    assert "small_dma" in _rules("add_custom", tile_length=512)
    p = profile(
        run(
            RunRequest(
                "add_custom", case="large", timing_only=True, params={"tile_length": 8192, "block_dim": 48}
            )
        )
    )
    assert "small_dma" not in {a.rule for a in p.pipeline.advice}


def _facts(**kw) -> rules.Facts:
    base = rules.Facts(
        utilisation={"vec": 0.5, "mte2": 0.5},
        wait_ratios={},
        overlap=0.9,
        cores_used=48,
        chip_cores=48,
        core_kind="AIV",
        waves=1,
        last_wave_cores=48,
        balance=1.0,
        dma_mean_bytes=64 * 1024,
        dma_fixed_share=0.05,
        uses_cube=False,
        bound="compute",
        roof_fraction=0.3,
        capacity={},
        kernel_us=100.0,
        launch_overhead_us=3.0,
    )
    return replace(base, **kw)


def test_a_healthy_run_gets_no_advice():
    assert rules.advise(_facts()) == ()


def test_tail_imbalance_fires_on_a_short_last_wave_and_on_a_slow_core():
    assert [a.rule for a in rules.advise(_facts(waves=2, last_wave_cores=12))] == ["tail_imbalance"]
    assert [a.rule for a in rules.advise(_facts(balance=rules.BALANCE_MAX))] == ["tail_imbalance"]
    assert rules.advise(_facts(balance=rules.BALANCE_MAX - 0.01)) == ()


def test_low_cube_fires_below_its_threshold_only_when_the_cube_is_used():
    fire = _facts(uses_cube=True, utilisation={"cube": rules.CUBE_UTIL_MIN - 0.01})
    quiet = _facts(uses_cube=True, utilisation={"cube": rules.CUBE_UTIL_MIN})
    assert [a.rule for a in rules.advise(fire)] == ["low_cube"]
    assert rules.advise(quiet) == ()
    assert rules.advise(_facts(utilisation={"cube": 0.0})) == ()


def test_memory_bound_fires_near_the_roof():
    assert [a.rule for a in rules.advise(_facts(bound="memory", roof_fraction=0.7))] == ["memory_bound"]
    assert rules.advise(_facts(bound="memory", roof_fraction=0.69)) == ()


def test_capacity_reports_full_memories_and_headroom_only_with_a_tiling_problem():
    full = _facts(capacity={"ub": (190_000, 196_352)})
    assert [a.rule for a in rules.advise(full)] == ["capacity_headroom"]
    roomy = _facts(capacity={"ub": (10_000, 196_352)})
    assert rules.advise(roomy) == ()
    roomy_small_dma = replace(roomy, dma_mean_bytes=2048, dma_fixed_share=0.6)
    assert [a.rule for a in rules.advise(roomy_small_dma)] == ["small_dma", "capacity_headroom"]


def test_rules_with_unmeasured_facts_are_skipped():
    assert (
        rules.advise(
            _facts(
                overlap=None,
                wait_ratios={"mte2": 0.5},
                chip_cores=None,
                balance=None,
                dma_mean_bytes=None,
                dma_fixed_share=None,
            )
        )
        == ()
    )


def test_tail_imbalance_fires_when_a_second_wave_runs_on_few_cores():
    report = run(
        RunRequest(
            "add_custom", case="large", timing_only=True, params={"block_dim": 60, "tile_length": 4096}
        )
    )
    p = profile(report)
    cb = p.pipeline.core_balance
    assert (cb.waves, cb.last_wave_cores, cb.cores_used) == (2, 12, 48)
    assert "tail_imbalance" in {a.rule for a in p.pipeline.advice}
