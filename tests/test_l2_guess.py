"""Guessed L2 counts (npu/memory/l2guess.py): a timing-only cube launch that runs its kernel once on
counts learnt from earlier launches gives exactly the launch the counting pre-pass gives."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st

from asc_tui.devkit.run.loader import load_operator
from asc_tui.devkit.run.runner import prepare
from asc_tui.npu.chip import load_chip
from asc_tui.npu.errors import TilingError
from asc_tui.npu.launch import launch
from asc_tui.npu.memory import l2, l2guess, prepass

CHIP = load_chip("ascend910b4")
OP = load_operator("matmul")


def _launch(params, case="small"):
    _, _, _, lnch, _, gm = prepare(OP, case, params, timing_only=True, seed=0)
    return launch(OP.kernel, gm, lnch.tiling, lnch.block_dim, CHIP, numeric=False)


def _pre_passed(params, monkeypatch, case="small", how=None):
    """The launch (`how`: timing-only, or `_full`) as the counting pre-pass gives it."""
    with monkeypatch.context() as m:
        m.setattr(l2guess, "guess", lambda key, fields, exact=False: None)
        m.setattr(l2guess, "learn", lambda key, fields, prepass: None)
        return (how or _launch)(params, case)


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
    real = prepass.prepass_counts

    def counting(*args, **kw):
        calls.append(1)
        return real(*args, **kw)

    monkeypatch.setattr(prepass, "prepass_counts", counting)
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


def _on_a_wrong_guess(monkeypatch, how):
    """A launch (`how`) of the 128 x 256 tiling run on the counts of the 64 x 64 one, which
    differ; the 64 x 64 launch, and that one."""
    other = _launch(dict(tile_m=64, tile_n=64))
    assert other.l2_hit > 0
    wrong = next(iter(l2guess._books.values())).classes[0]
    with monkeypatch.context() as m:
        m.setattr(l2guess, "guess", lambda key, fields, exact=False: wrong)
        return other, how(dict(tile_m=128, tile_n=256))


def test_a_wrong_guess_runs_again_on_the_counts_it_found(prepasses, monkeypatch):
    _, rerun = _on_a_wrong_guess(monkeypatch, _launch)
    book = next(iter(l2guess._books.values()))
    assert len(prepasses) == 1  # the second launch ran twice, without a pre-pass
    assert_same(rerun, _pre_passed(dict(tile_m=128, tile_n=256), monkeypatch))
    assert len(book.classes) == 2  # and learnt the counts it found


#: tile_m, tile_n, tile_k of the random tilings
_TILES = (st.sampled_from([64, 128]), st.sampled_from([64, 128]), st.sampled_from([32, 64]))


@settings(max_examples=8, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(
    tilings=st.lists(
        st.tuples(
            *_TILES,
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
                mp.setattr(l2guess, "guess", lambda key, fields, exact=False, forced=forced: forced)
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
        return prepass.Prepass({"a": np.full(4, n, dtype=np.int32)}, [("a", 0, 1, 1, 64, 64, 0)])

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
        return prepass.Prepass({"a": np.full(4, n, dtype=np.int32)}, [("a", 0, 1, 1, 64, 64, 0)])

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(l2guess, "_MAX_ENTRIES", 6)  # launches fall out of the book too
        book = l2guess._Book()
        for fields, n in launches:
            before = set(book.irrelevant)
            book.learn(fields, counts(n))
            assert book.irrelevant == _closure(book.entries, before)


# ---- full launches (l2guess.check_full) ---------------------------------------------------------


def _full(params, case="small"):
    """A full launch and its output's bits (copied: prepared arrays are shared between runs)."""
    _, _, _, lnch, arrays, gm = prepare(OP, case, params, timing_only=False, seed=0)
    res = launch(OP.kernel, gm, lnch.tiling, lnch.block_dim, CHIP, numeric=True)
    return res, arrays["c"].copy()


def _full_pre_passed(params, monkeypatch, case="small"):
    return _pre_passed(params, monkeypatch, case, _full)


def assert_same_full(a, b) -> None:
    assert_same(a[0], b[0])
    assert a[1].dtype == b[1].dtype and np.array_equal(a[1].view(np.uint16), b[1].view(np.uint16))


def test_a_full_launch_guesses_from_an_earlier_launch_with_the_same_tiling(prepasses, monkeypatch):
    params = dict(tile_m=64, tile_n=64)
    _full(params)
    assert len(prepasses) == 1
    again = _full(params)
    assert len(prepasses) == 1  # the second ran on the counts the first one's pre-pass found
    _launch(params)  # a timing-only launch of it guesses from the full ones too
    assert len(prepasses) == 1
    assert_same_full(again, _full_pre_passed(params, monkeypatch))


def test_a_full_launch_guesses_from_a_timing_only_one_but_never_by_fields_learnt_irrelevant(prepasses):
    tiles = dict(tile_m=64, tile_n=64)
    _launch(dict(tiles, block_dim=3))
    _launch(dict(tiles, block_dim=8))  # block_dim learnt irrelevant
    assert len(prepasses) == 2
    _full(dict(tiles, block_dim=8))  # the same fields as a launch before: guessed
    assert len(prepasses) == 2
    _full(dict(tiles, block_dim=5))  # a timing-only launch would guess here; a full one does not
    assert len(prepasses) == 3


def test_a_full_launch_on_a_wrong_guess_is_re_timed_on_the_pre_passed_counts(prepasses, monkeypatch):
    other, got = _on_a_wrong_guess(monkeypatch, _full)
    assert len(prepasses) == 2  # run after the full pass, which tallied other reads
    want = _full_pre_passed(dict(tile_m=128, tile_n=256), monkeypatch)
    assert got[0].l2_hit != other.l2_hit
    assert_same_full(got, want)
    assert got[0].mode == want[0].mode and got[0].log == want[0].log


@settings(max_examples=6, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(
    tilings=st.lists(
        st.tuples(
            *_TILES,
            st.sampled_from([3, 8, 24]),
            st.booleans(),
            st.integers(-1, 3),
        ),
        min_size=4,
        max_size=7,
    )
)
def test_full_launches_on_any_guess_equal_pre_passed_ones(tilings):
    """Full and timing-only launches in any order, each full one on whatever is guessed (`pick`
    >= 0: the book's counts of that index, right or wrong; else what was learnt, if anything):
    its output bits and timeline are the pre-passed launch's."""
    l2guess.forget()
    mp = pytest.MonkeyPatch()
    learnt = l2guess.guess
    try:
        for tm, tn, tk, blocks, full, pick in tilings:
            params = dict(tile_m=tm, tile_n=tn, tile_k=tk, block_dim=blocks)
            if not full:
                _launch(params)
                continue
            books = list(l2guess._books.values())
            if pick >= 0 and books and books[0].classes:
                forced = books[0].classes[pick % len(books[0].classes)]
                mp.setattr(l2guess, "guess", lambda key, fields, exact=False, forced=forced: forced)
            fast = _full(params)
            mp.setattr(l2guess, "guess", learnt)
            assert_same_full(fast, _full_pre_passed(params, mp))
    finally:
        mp.undo()


def test_a_re_timed_full_launch_logs_at_the_times_of_its_timeline(tmp_path, monkeypatch):
    # a matmul that waits for every pipe after each tile and logs: its log times follow the
    # transfers' durations, which the L2 counts decide
    src = (Path(OP.path).read_text()).replace(
        "            self.CopyOut(m0, n0, mt, nt)\n",
        "            self.CopyOut(m0, n0, mt, nt)\n"
        "            AscendC.PipeBarrier(AscendC.PIPE_ALL)\n"
        '            AscendC.printf("tile %d done", int(tile))\n',
    )
    path = tmp_path / "matmul_logged.py"
    path.write_text(src)
    op = load_operator(path)

    def full(params):
        _, _, _, lnch, _, gm = prepare(op, "small", params, timing_only=False, seed=0)
        return launch(op.kernel, gm, lnch.tiling, lnch.block_dim, CHIP, numeric=True)

    def timing(params):
        _, _, _, lnch, _, gm = prepare(op, "small", params, timing_only=True, seed=0)
        return launch(op.kernel, gm, lnch.tiling, lnch.block_dim, CHIP, numeric=False)

    timing(dict(tile_m=64, tile_n=64))
    wrong = next(iter(l2guess._books.values())).classes[0]
    with monkeypatch.context() as m:
        m.setattr(l2guess, "guess", lambda key, fields, exact=False: wrong)
        on_guess = full(dict(tile_m=128, tile_n=256))
    want = _pre_passed(dict(tile_m=128, tile_n=256), monkeypatch, how=lambda p, case: full(p))
    assert_same(on_guess, want)
    assert on_guess.log and on_guess.log == want.log
