"""Guessed L2 counts (npu/l2guess.py): a timing-only cube launch that runs its kernel once on
counts learnt from earlier launches gives exactly the launch the counting pre-pass gives."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st

from asc_tui.devkit.loader import load_operator
from asc_tui.devkit.runner import prepare
from asc_tui.npu import l2, l2guess
from asc_tui.npu.chip import load_chip
from asc_tui.npu.errors import TilingError
from asc_tui.npu.launch import launch

CHIP = load_chip("ascend910b4")
OP = load_operator("matmul")


def _launch(params, case="small"):
    _, _, _, lnch, _, gm = prepare(OP, case, params, timing_only=True, seed=0)
    return launch(OP.kernel, gm, lnch.tiling, lnch.block_dim, CHIP, numeric=False)


def _pre_passed(params, monkeypatch, case="small"):
    """The launch as the counting pre-pass gives it (no guess)."""
    with monkeypatch.context() as m:
        m.setattr(l2guess, "guess", lambda key, fields: None)
        m.setattr(l2guess, "learn", lambda key, fields, prepass: None)
        return _launch(params, case)


def assert_same(a, b) -> None:
    assert a.timeline_key() == b.timeline_key()
    assert (a.gm_read, a.gm_write, a.l2_hit) == (b.gm_read, b.gm_write, b.l2_hit)
    for name in ("block", "pipe", "start", "end", "op", "nbytes", "kind", "link"):
        assert np.array_equal(getattr(a.records, name), getattr(b.records, name)), name


@pytest.fixture(autouse=True)
def _fresh():
    l2guess.forget()
    yield
    l2guess.forget()


@pytest.fixture
def prepasses(monkeypatch):
    """How many counting pre-passes ran."""
    calls = []
    real = l2.prepass_counts

    def counting(*args, **kw):
        calls.append(1)
        return real(*args, **kw)

    monkeypatch.setattr(l2, "prepass_counts", counting)
    return calls


def test_block_dim_is_learnt_irrelevant_and_the_third_launch_runs_the_kernel_once(prepasses, monkeypatch):
    tiles = dict(tile_m=64, tile_n=64)  # 12 tiles of C in the small case
    _launch(dict(tiles, block_dim=3))
    _launch(dict(tiles, block_dim=8))  # differs in block_dim alone and counts alike: irrelevant
    assert len(prepasses) == 2
    guessed = _launch(dict(tiles, block_dim=5))
    assert len(prepasses) == 2  # no pre-pass: the launch checked its own tally
    assert_same(guessed, _pre_passed(dict(tiles, block_dim=5), monkeypatch))


def test_launches_on_the_same_counts_work_out_each_regions_hits_once(monkeypatch):
    """A region's L2-hit bytes depend on the counts and the L2 size alone: launches that guessed
    the same counts share them (`Prepass.hits`), and give what a fresh pre-pass gives."""
    tiles = dict(tile_m=64, tile_n=64)
    _launch(dict(tiles, block_dim=3))
    _launch(dict(tiles, block_dim=8))
    regions = []
    real = l2.L2Model._region_hits

    def counting(self, keys):
        regions.extend(keys)
        return real(self, keys)

    monkeypatch.setattr(l2.L2Model, "_region_hits", counting)
    guessed = _launch(dict(tiles, block_dim=5))
    assert regions == []  # every region it read was worked out by the launches before
    monkeypatch.undo()
    assert_same(guessed, _pre_passed(dict(tiles, block_dim=5), monkeypatch))


def test_a_wrong_guess_runs_again_on_the_counts_it_found(prepasses, monkeypatch):
    other = _launch(dict(tile_m=64, tile_n=64))  # its counts differ from the 128 x 256 tiling's
    assert other.l2_hit > 0
    book = next(iter(l2guess._books.values()))
    wrong = book.classes[0]
    monkeypatch.setattr(l2guess, "guess", lambda key, fields: wrong)
    rerun = _launch(dict(tile_m=128, tile_n=256))
    monkeypatch.undo()
    assert len(prepasses) == 1  # the second launch ran twice, without a pre-pass
    assert_same(rerun, _pre_passed(dict(tile_m=128, tile_n=256), monkeypatch))
    assert len(book.classes) == 2  # and learnt the counts it found


@settings(max_examples=8, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(
    tilings=st.lists(
        st.tuples(
            st.sampled_from([64, 128]),
            st.sampled_from([64, 128]),
            st.sampled_from([32, 64]),
            st.sampled_from([1, 2]),
            st.sampled_from([3, 8, 24]),
            st.integers(-1, 3),
        ),
        min_size=6,
        max_size=10,
    )
)
def test_guessed_launches_equal_pre_passed_ones_for_random_tiling_sequences(tilings):
    """Whatever was learnt before (right guesses, wrong ones, none) and whatever is guessed
    (`pick` >= 0: the book's counts of that index, right or wrong), each launch is the one
    the pre-pass gives."""
    l2guess.forget()
    mp = pytest.MonkeyPatch()
    learnt = l2guess.guess
    try:
        for tm, tn, tk, bufs, blocks, pick in tilings:
            params = dict(tile_m=tm, tile_n=tn, tile_k=tk, double_buffer=bufs, block_dim=blocks)
            books = list(l2guess._books.values())
            if pick >= 0 and books and books[0].classes:
                forced = books[0].classes[pick % len(books[0].classes)]
                mp.setattr(l2guess, "guess", lambda key, fields, forced=forced: forced)
            try:
                fast = _launch(params)
            except TilingError:
                reject()
            mp.setattr(l2guess, "guess", learnt)
            assert_same(fast, _pre_passed(params, mp))
    finally:
        mp.undo()


def test_the_book_learns_only_from_launches_that_differ_in_one_field_and_stays_small(monkeypatch):
    def counts(n):
        return l2.Prepass({"a": np.full(4, n, dtype=np.int32)}, [("a", 0, 1, 1, 64, 64, 0)])

    book = l2guess._Book()
    book.learn((8, 64, 64), counts(2))
    book.learn((24, 128, 32), counts(2))  # alike, but two fields differ: nothing learnt
    assert book.irrelevant == set() and book.guess((16, 64, 64)) is None
    book.learn((16, 64, 64), counts(2))  # block_dim alone differs from the first
    assert book.irrelevant == {0}
    assert book.guess((20, 128, 32)).counts["a"][0] == 2
    assert book.guess((20, 256, 32)) is None
    monkeypatch.setattr(l2guess, "_MAX_BYTES", 3 * l2guess._size(counts(0)))
    for n in range(3, 6):  # a fourth distinct count map would pass the cap: start over
        book.learn((8, n, 0), counts(n))
    assert len(book.classes) == 1 and len(book.entries) == 1


def _closure(entries: list, start: set) -> set:
    """The fields a book must call irrelevant: the least superset of `start` in which no two
    launches counting alike differ in exactly one field outside it."""
    irrelevant = set(start)
    while True:
        found = set()
        for i, (a, ca) in enumerate(entries):
            for b, cb in entries[i + 1 :]:
                diff = [k for k, (x, y) in enumerate(zip(a, b)) if x != y and k not in irrelevant]
                if ca == cb and len(a) == len(b) and len(diff) == 1:
                    found.add(diff[0])
        if found <= irrelevant:
            return irrelevant
        irrelevant |= found


@given(
    st.lists(
        st.tuples(st.tuples(st.integers(0, 2), st.integers(0, 2), st.integers(0, 2)), st.integers(0, 2)),
        max_size=40,
    )
)
def test_learning_one_launch_at_a_time_finds_every_irrelevant_field(launches):
    def counts(n):
        return l2.Prepass({"a": np.full(4, n, dtype=np.int32)}, [("a", 0, 1, 1, 64, 64, 0)])

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(l2guess, "_MAX_ENTRIES", 6)  # launches fall out of the book too
        book = l2guess._Book()
        for fields, n in launches:
            before = set(book.irrelevant)
            book.learn(fields, counts(n))
            assert book.irrelevant == _closure(book.entries, before)
