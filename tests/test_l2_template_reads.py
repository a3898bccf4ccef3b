"""L2 reads in template runs (npu/memory/l2.py `L2Model._template_read`): checking the blocks that may
replay a read against the pre-pass's hits by base address (`_same_bases`) narrows the guards,
counts, tallies and works out hits exactly as checking them block by block does."""

from __future__ import annotations

from itertools import repeat
from types import SimpleNamespace

import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st

from asc_tui.npu.memory.l2 import L2Model
from asc_tui.npu.memory.prepass import Prepass
from asc_tui.npu.replay.blockindex import BlockIndex
from asc_tui.npu.replay.replay import Guards

BUF = SimpleNamespace(name="a", count=48 * 512, dtype=np.dtype(np.uint8))
OTHER = SimpleNamespace(name="b", count=4096, dtype=np.dtype(np.uint8))  # no counts: first-read model


def block_by_block(l2: L2Model, g: Guards, buf, args: tuple) -> int:
    """`_template_read` as it was before `_same_bases`: one key per later block, each looked
    up in `hits` — the straightforward computation the fast path must equal."""
    tainted = BlockIndex in map(type, args)
    plain = tuple([a.v if type(a) is BlockIndex else a for a in args]) if tainted else args
    if not l2.record and (not l2.counts or l2.counts.get(buf.name) is None):
        g.pin()
    hit = l2._read(buf, *plain)
    nbytes = plain[1] * plain[2] * plain[3]
    if tainted:
        nd, rows, row_bytes = (a.values() if type(a) is BlockIndex else a for a in args[1:4])
        same = (nd * rows * row_bytes > 0) == (nbytes > 0)
        if same is not True:
            g.agree(np.broadcast_to(same, g.xs.shape))
    if l2.tally and l2.enabled and nbytes > 0:
        g.l2.regions.append((buf.name, tuple([a.values() if type(a) is BlockIndex else a for a in args])))
    if l2.record:
        return hit
    if tainted and not g.pinned:
        later = g.candidates()
        if len(later):
            cols = [a.values()[later].tolist() if type(a) is BlockIndex else repeat(a) for a in args]
            keys = list(zip(repeat(buf.name), *cols))
            missing = [k for k in keys if k not in l2.hits]
            if missing:
                l2.hits.update(l2._region_hits(list(dict.fromkeys(missing))))
            differ = [x for x, key in zip(later.tolist(), keys) if l2.hits[key] != hit]
            if differ:
                same = np.ones(len(g.xs), dtype=bool)
                same[differ] = False
                g.agree(same)
    g.l2.hit += hit
    g.l2.miss += nbytes - hit
    return hit


def _model(counts, known: list, capacity: int, tally: bool) -> L2Model:
    return L2Model(
        capacity, 110.0, prepass=Prepass({"a": np.array(counts, dtype=np.int32)}, known), tally=tally
    )


def _arg(g: Guards, spec):
    """A read argument in template run `g`: an int, or (per-block values) a block index — affine
    (`("affine", a, c)`: a * block + c) or one value per block (a list)."""
    if isinstance(spec, int):
        return spec
    if spec[0] == "affine":
        _, a, c = spec
        return BlockIndex(a * g.block + c, a, g) if a else a * g.block + c
    vals = np.array(spec, dtype=np.int64)
    return BlockIndex(int(vals[g.block]), 0, g, vals)


def _state(l2: L2Model, g: Guards) -> tuple:
    regions = [
        (n, tuple(a.tolist() if isinstance(a, np.ndarray) else a for a in args)) for n, args in g.l2.regions
    ]
    return (
        g.pinned,
        g.admitted().tolist(),
        g.candidates().tolist(),
        g.l2.hit,
        g.l2.miss,
        regions,
        l2.hits,
        l2.reads,
        l2.hit_bytes,
        l2.miss_bytes,
    )


def _run(reads, block_dim, block, counts, known, capacity, tally, narrow, fast: bool) -> tuple:
    l2 = _model(counts, known, capacity, tally)
    g = Guards(block, block_dim)
    if narrow is not None:
        g.agree(np.array(narrow, dtype=bool))
    read = l2._template_read if fast else (lambda g, buf, args: block_by_block(l2, g, buf, args))
    hits = [read(g, buf, tuple(_arg(g, s) for s in specs)) for buf, specs in reads]
    return hits, _state(l2, g)


@st.composite
def _case(draw):
    block_dim = draw(st.integers(1, 10))
    block = draw(st.integers(0, block_dim - 1))
    pool = draw(st.lists(st.integers(0, 26000), min_size=1, max_size=4))
    shapes = draw(
        st.lists(
            st.tuples(
                st.integers(1, 2),
                st.integers(1, 3),
                st.integers(1, 900),
                st.integers(1, 1500),
                st.integers(0, 3000),
            ),
            min_size=1,
            max_size=2,
        )
    )
    per_block = st.lists(st.sampled_from(pool), min_size=block_dim, max_size=block_dim)
    base = st.one_of(
        per_block,
        st.tuples(st.just("affine"), st.integers(-600, 600), st.sampled_from(pool)),
        st.sampled_from(pool),
    )
    reads = []
    for _ in range(draw(st.integers(1, 4))):
        nd, rows, row_bytes, stride, mstride = draw(st.sampled_from(shapes))
        rows = draw(
            st.one_of(st.just(rows), st.lists(st.integers(1, 3), min_size=block_dim, max_size=block_dim))
        )
        buf = draw(st.sampled_from([BUF, BUF, BUF, OTHER]))
        reads.append((buf, (draw(base), nd, rows, row_bytes, stride, mstride)))
    # the regions the pre-pass saw: some of the pool's, in every shape
    known = [("a", b, *s) for b in pool for s in shapes if draw(st.booleans())]
    return dict(
        reads=reads,
        block_dim=block_dim,
        block=block,
        counts=draw(st.lists(st.integers(0, 6), min_size=48, max_size=48)),
        known=known,
        capacity=draw(st.sampled_from([1 << 30, 4096, 0])),  # 0: the L2 model off
        tally=draw(st.booleans()),
        narrow=draw(st.none() | st.lists(st.booleans(), min_size=block_dim, max_size=block_dim)),
    )


_SHAPE = (1, 1, 1024, 1024, 0)  # 1 KB: 2 chunks


@settings(max_examples=400, deadline=None)
@given(case=_case())
@example(  # the L2 model off: the template hits nothing, its own region's hits are not that
    case=dict(
        reads=[(BUF, ([512, 0, 0, 0], *_SHAPE))],
        block_dim=4,
        block=1,
        counts=[4] * 48,
        known=[("a", 0, *_SHAPE)],
        capacity=0,
        tally=False,
        narrow=None,
    )
)
def test_template_reads_equal_block_by_block_checks(case):
    assert _run(**case, fast=True) == _run(**case, fast=False)


def test_a_block_whose_region_hits_otherwise_may_not_replay():
    """Block 2 reads a region the pre-pass saw, of the template's shape, that hits L2 by other
    bytes; block 3 one it did not see (worked out then), that hits alike. Fails if the
    check by base admits a block without looking up its own region."""
    shape = _SHAPE
    counts = [4] * 8 + [1] * 8 + [4] * 32  # chunks 8-15 (bytes 4096-8191) read once: no hits
    known = [("a", 0, *shape), ("a", 4096, *shape), ("a", 1024, *shape)]
    l2 = _model(counts, known, 1 << 30, tally=False)
    g = Guards(0, 5)
    bases = BlockIndex(0, 0, g, np.array([0, 0, 4096, 2048, 1024], dtype=np.int64))
    hit = l2._template_read(g, BUF, (bases, *shape))
    assert hit == 1024 * 3 // 4
    assert l2.hits[("a", 4096, *shape)] == 0
    assert ("a", 2048, *shape) in l2.hits and l2.hits[("a", 2048, *shape)] == hit
    assert g.admitted().tolist() == [True, True, False, True, True]


@given(
    block_dim=st.integers(1, 12),
    data=st.data(),
)
def test_guards_admit_the_blocks_every_agreement_keeps(block_dim, data):
    """`Guards.agree` keeps its mask (and the candidates worked out from it) when an
    agreement drops only blocks already dropped: what it admits is still every block that
    all agreements keep."""
    block = data.draw(st.integers(0, block_dim - 1))
    g = Guards(block, block_dim)
    want = np.ones(block_dim, dtype=bool)
    for same in data.draw(
        st.lists(st.lists(st.booleans(), min_size=block_dim, max_size=block_dim), max_size=6)
    ):
        same = np.array(same, dtype=bool)
        before = g.mask
        g.agree(same)
        want &= same
        if before is not None and not (before & ~same).any():
            assert g.mask is before
        assert g.admitted().tolist() == want.tolist()
        assert g.candidates().tolist() == [x for x in range(block + 1, block_dim) if want[x]]
