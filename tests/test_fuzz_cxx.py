"""The C++ fuzz campaign in the suite (tests/fuzz_mutants.py, fixed seed): mutants of the
bundled `.asc` operators and the test sample projects, judged by the whole-unit check."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fuzz_mutants as fm  # noqa: E402

SEED, COUNT = 32, 200


@pytest.fixture(scope="module")
def summary():
    return fm.campaign(COUNT, SEED)


def test_the_campaign_has_rejected_mutants_of_every_project(summary):
    rejected = {o.mutant.project for o in summary.rejected}
    assert len(summary.outcomes) == COUNT
    assert len(summary.rejected) >= COUNT // 4
    assert rejected == {p for p, _f in fm.projects(False, None)}


def test_no_rejected_mutant_passes(summary):
    bad = [(o.mutant.file.name, o.mutant.line, o.mutant.kind) for o in summary.rejected_passed()]
    assert bad == []


def test_every_rejected_mutant_is_a_build_error_of_the_edited_file(summary):
    bad = [
        (o.mutant.file.name, o.mutant.line, o.message[:120]) for o in summary.rejected if o.build_line is None
    ]
    assert bad == []


def test_syntax_errors_are_at_the_mutated_line(summary):
    syn = [o for o in summary.rejected if o.syntax]
    assert syn and len(summary.located(syn)) >= 0.9 * len(syn), summary.report()


def test_no_mutant_shows_internal_text(summary):
    bad = [(o.mutant.file.name, o.mutant.line, o.mutant.kind, o.internal[:200]) for o in summary.internal()]
    assert bad == []


def test_the_mutator_makes_each_kind_of_edit():
    import random

    text = (Path(fm.REPO) / "tests" / "samples" / "vadd" / "vadd.asc").read_text()
    for kind in fm.KINDS:
        m = fm.mutate(text, kind, random.Random(1))
        assert m is not None and m[0] != text and 1 <= m[1] <= m[0].count("\n") + 1, kind
