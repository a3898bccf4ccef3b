"""The team's own cube test sample (tests/samples/cube_nz) through the whole sample loop."""

from pathlib import Path

from asc_tui.devkit.conformance import classify
from asc_tui.devkit.run.runner import RunRequest, run

SAMPLE = Path(__file__).parent / "samples" / "cube_nz"


def test_cube_sample_with_nz_output_int4_packing_and_bit_casts_passes():
    r = run(RunRequest(str(SAMPLE)))
    assert r.passed, r.errors
    assert [ln["kernel"] for ln in r.sample.launches] == ["cube_nz", "pack_int4"]
    assert "test pass!" in r.sample.verify["output"]
    assert classify(r) == ("PASS", "")


def test_cube_sample_timing_only_gives_the_full_runs_timeline():
    full = run(RunRequest(str(SAMPLE)))
    timing = run(RunRequest(str(SAMPLE), timing_only=True))
    assert [e.kernel_cycles for e in full.sample.emulations] == [
        e.kernel_cycles for e in timing.sample.emulations
    ]
