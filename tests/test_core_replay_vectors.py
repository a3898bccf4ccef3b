"""Block indices kept as `s * base + c` (npu/replay/replay.py): the short ways — no array for an
int offset, no comparison of arrays whose outcome the exact spans already show, min/max settled
by an int — give exactly what the straightforward path gives (`blockindex._FAST = False`: every
vector an array, every comparison tested on the arrays): the same values, the same plain ints,
the same errors, and the same guards (which blocks may replay the template)."""

import operator

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from asc_tui.npu.replay import blockindex
from asc_tui.npu.replay.blockindex import BlockIndex, steady_offset, tmax, tmin, trange
from asc_tui.npu.replay.replay import Guards

_EDGES = [1 << 62, 1 << 63, -(1 << 63), (1 << 63) - 1, 1 << 64, 3 << 61, -(1 << 62), 2**63 - 4096]
ints = st.one_of(
    st.integers(-8, 8),
    st.integers(-5000, 5000),
    st.sampled_from([1, 2, 3, 4, 16, 64, 128, 256, 1024]),
    st.sampled_from(_EDGES),  # past int64 or near it: numpy wraps or raises; so must we
)
BINARY = {
    "add": operator.add,
    "radd": lambda x, o: o + x,
    "sub": operator.sub,
    "rsub": lambda x, o: o - x,
    "mul": operator.mul,
    "rmul": lambda x, o: o * x,
    "floordiv": lambda x, o: x // (o or 3),
    "mod": lambda x, o: x % (o or 3),
    "neg": lambda x, o: -x,
}
RELATIONS = [operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne]
MASKS = [0xFFFFFFFF, 0x80000000, 2048, (1 << 64) - 1]
step = st.tuples(
    st.sampled_from(
        ["bin", "bin", "cmp", "edge", "edge", "pair", "pair", "steady", "min", "max", "and", "int", "range"]
    ),
    st.integers(0, 10**6),  # which operand from the pool
    st.one_of(ints, st.integers(0, 10**6).map(lambda k: ("pool", k))),  # an int or a pool value
    st.sampled_from(sorted(BINARY)),
    st.integers(0, 5),
)


def _describe(x):
    if type(x) is BlockIndex:
        try:
            vals = x.values().tolist()
        except Exception as exc:  # an affine value past int64: numpy's error, both ways
            vals = type(exc).__name__
        return ("BlockIndex", x.v, x.a, vals)
    return (type(x).__name__, x)


def _values(x, n: int) -> np.ndarray:
    return x.values() if type(x) is BlockIndex else np.full(n, x, dtype=np.int64)


def _guards(g: Guards):
    mask = None if g.mask is None else g.mask.tolist()
    later = [
        b
        for b in range(g.block + 1, len(g.xs))
        if g.lo <= b <= g.hi and b not in g.ne and (mask is None or mask[b])
    ]
    assert g.candidates().tolist() == later
    return (g.lo, g.hi, sorted(g.ne), g.pinned, mask, g.admitted().tolist(), later)


def _program(block_dim, block, a, per, steps):
    """Run `steps` on a template's block index and a tile coordinate `index // per`; every
    result, error and guard state."""
    g = Guards(block, block_dim)
    index = BlockIndex(block, a, g)
    pool = [index, index // per, index % per * 64]
    out = []
    for kind, i, o, name, r in steps:
        x = pool[i % len(pool)]
        if type(o) is tuple:
            o = pool[o[1] % len(pool)]
        try:
            if kind == "bin":
                y = BINARY[name](x, o)
                pool.append(y)
                out.append(_describe(y))
            elif kind == "cmp":
                out.append(RELATIONS[r](x, o))
            elif kind == "edge":  # an int at (or next to) a value some block has: spans' ends
                vals = x.values() if type(x) is BlockIndex else [x]
                edge = int(vals[i % len(vals)]) + (r % 3 - 1)
                out.append((RELATIONS[r](x, edge), RELATIONS[r](edge, x)))
            elif kind == "pair":  # two values over one base: a tensor's size and its extent
                m = r % 3 - 1 or 2
                vals = x.values() if type(x) is BlockIndex else [x]
                edge = (1 - m) * int(vals[i % len(vals)]) + (r % 3 - 1)  # x - y is 0 in a block
                y = x * m + (edge if type(o) is not int else o)
                pool.extend((x + y, x - y))
                out.append((RELATIONS[r](x, y), _describe(y), _describe(x + y), _describe(x - y)))
            elif kind == "steady":  # K steps' offsets from one origin (cube trace grids)
                y = o if type(o) is BlockIndex else pool[r % len(pool)]
                d = steady_offset(x, y)
                if d is None:
                    d = (_values(x, block_dim) - _values(y, block_dim)).tolist()
                else:
                    d = [d] * block_dim
                out.append(d)
            elif kind in ("min", "max"):
                args = (x, o) if r % 2 else (o, x, pool[r % len(pool)])
                out.append(_describe((tmin if kind == "min" else tmax)(*args)))
            elif kind == "and":
                out.append(_describe(x & MASKS[r % len(MASKS)]))
            elif kind == "range":
                out.append(len(trange(x, o, r + 1)))
            else:
                out.append(int(x))
        except Exception as exc:
            out.append(("raised", type(exc).__name__))
        out.append(_guards(g))
    return out


@settings(max_examples=400, deadline=None)
@given(
    block_dim=st.integers(1, 30),
    block=st.integers(0, 29),
    a=st.sampled_from([1, 1, 2, -1, 3, 48]),
    per=st.integers(2, 7),
    steps=st.lists(step, min_size=1, max_size=30),
)
def test_the_short_ways_give_what_the_arrays_give(block_dim, block, a, per, steps):
    block %= block_dim
    fast = _program(block_dim, block, a, per, steps)
    blockindex._FAST = False
    try:
        slow = _program(block_dim, block, a, per, steps)
    finally:
        blockindex._FAST = True
    assert slow == fast


def test_a_tiled_kernels_offsets_keep_no_array_and_narrow_no_guard():
    """Tile origins after `// tiles_per_row` (a vector), offset per K step and compared with a
    GM extent, as a cube kernel and the kernel API do: the template stays good for every block,
    and only the values some consumer asks for become arrays."""
    g = Guards(8, 24)
    tile = BlockIndex(8, 1, g)
    m0 = tile // 4 * 128
    for k0 in range(0, 1024, 64):
        start = m0 * 1024 + k0
        size = 1024 * 1024 - start
        assert type(start) is BlockIndex and start.vals is None and size.vals is None
        assert not min(size, 1024 * 1024 - start) < 16 * 1024  # settled by spans: no array
        assert start.vals is None and g.mask is None
        assert tmin(128, 1024 - m0) == 128
    assert not g.pinned and g.admitted().all()
    want = (np.arange(24) // 4 * 128) * 1024 + 960
    assert np.array_equal(start.values(), want)


def test_a_value_past_int64_is_what_numpy_makes_of_it():
    """numpy's int64 wraps (and raises for an int it cannot hold): the block values follow it,
    while the template's own value stays the exact int, as the straightforward path has it."""
    g = Guards(1, 4)
    v = BlockIndex(1, 1, g) // 3 * 3  # 0, 0, 0, 3: a vector
    big = v * (1 << 62) * 4  # wraps to 0 in every block
    assert big.v == 0 and big.values().tolist() == [0, 0, 0, 0]
    huge = v + ((1 << 63) - 1)
    assert huge.values().tolist()[3] == -(1 << 63) + 2
    try:
        v + (1 << 63)
    except OverflowError:
        pass
    else:
        raise AssertionError("numpy raises for an int it cannot hold")


def test_a_mask_without_the_templates_own_block_settles_nothing_against_it():
    """A wrapped value can leave the template's own block out of the mask (its exact value
    and numpy's differ); a comparison whose outcome in the masked blocks is not the template's
    then empties the mask, as the arrays say, even though the masked blocks agree."""

    def run():
        g = Guards(0, 4)
        base = BlockIndex(0, 1, g) // 3  # 0, 0, 0, 1
        wrapped = (base - 2) * (1 << 62) * 2  # exact -2**64 here; numpy's 0, 0, 0, -2**63
        assert wrapped < 0  # exact: True; numpy's blocks 0-2 say False: the mask keeps block 3
        assert g.mask.tolist() == [False, False, False, True]
        assert base * 5 < 3  # True here, False in block 3 (the only one the mask keeps)
        return g.mask.tolist()

    fast = run()
    blockindex._FAST = False
    try:
        assert run() == fast == [False] * 4
    finally:
        blockindex._FAST = True


def test_a_second_tile_pass_is_settled_by_the_mask_its_loop_set():
    """Blocks 0-7 of 24 take two of 32 tiles: the loop's guard keeps them by a mask, and the
    second tile's bounds checks, which blocks 8-23 (past the last tile) would fail, leave the
    mask as it is without an array."""
    g = Guards(0, 24)
    tiles = list(trange(BlockIndex(0, 1, g), 32, 24))
    mask = g.mask
    assert mask.tolist() == [True] * 8 + [False] * 16
    start = tiles[1] // 4 * 128 * 1024  # the A tile's origin in the second pass
    extent = 1024 * 1024 - start
    assert not 7 * 16 * 1024 + 15 * 1024 + 64 > extent  # in blocks 0-7; not in 8-23
    assert g.mask is mask and extent.vals is None
