"""A block's record tuples become the same columns whichever way they are converted."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from asc_tui.npu.columns import _columns_of, _columns_of_tuples, _intern, _sites
from asc_tui.npu.records import RECORD, RECORD_COLUMNS

_records = st.lists(
    st.tuples(
        st.integers(0, 7),
        st.floats(0, 1e9, allow_nan=False),
        st.floats(0, 1e9, allow_nan=False),
        st.sampled_from(["Mmad", "LoadData", "DataCopy(Nd2Nz)", "DeQue", "AllocTensor"]),
        st.sampled_from(["/a/operators/matmul.py", "/b/kernel.py", "<string>"]),
        st.integers(0, 5000),
        st.integers(0, 1 << 40),
        st.integers(0, 2),
        st.integers(-1, 100_000),
    ),
    min_size=1,
    max_size=60,
)


@settings(max_examples=200, deadline=None)
@given(rec=_records, seen=_records)
def test_tuples_give_the_columns_and_ids_of_their_record_table(rec, seen):
    """Op and site ids included, into tables that already hold some (`seen`'s)."""
    tables = []
    for convert in (lambda r, o, s: _columns_of(np.fromiter(r, RECORD, len(r)), o, s), _columns_of_tuples):
        ops, lines = {}, {}
        _columns_of(np.fromiter(seen, RECORD, len(seen)), ops, lines)
        tables.append((convert(rec, ops, lines), ops, lines))
    (a, ops_a, lines_a), (b, ops_b, lines_b) = tables
    assert ops_a == ops_b and lines_a == lines_b
    for name, dtype in RECORD_COLUMNS.items():
        assert a[name].dtype == b[name].dtype == dtype
        assert np.array_equal(a[name], b[name]), name


def _sites_by_unique(files_col, line_col: np.ndarray, lines: dict) -> np.ndarray:
    """`columns._sites` as it was (numpy's `unique` over file id × 2³² + line): the reference."""
    file_table: dict = {}
    file_ids = _intern(files_col, file_table)
    files = list(file_table)
    key = file_ids.astype(np.int64) * (1 << 32) + line_col
    uniq, inverse = np.unique(key, return_inverse=True)
    site_ids = np.array(
        [lines.setdefault((files[k >> 32], k & 0xFFFFFFFF), len(lines)) for k in uniq.tolist()],
        dtype=np.int32,
    )
    return site_ids[inverse.reshape(-1)]


_sites_col = st.lists(
    st.tuples(
        st.sampled_from(["/a/operators/matmul.py", "/b/kernel.py", "<string>", "/a/b.py"]),
        st.integers(0, 5000),
    ),
    min_size=1,
    max_size=60,
)


@settings(max_examples=200, deadline=None)
@given(sites=_sites_col, seen=_sites_col)
def test_site_ids_and_their_table_are_the_ones_numpys_unique_gave(sites, seen):
    """The same ids, and the same table (keys, their order and types), after `seen`'s."""
    files, lines_ = (list(c) for c in zip(*sites))
    out = []
    for fn in (_sites, _sites_by_unique):
        table: dict = {}
        first = [list(c) for c in zip(*seen)]
        fn(first[0], np.array(first[1], dtype=np.int64) if fn is _sites_by_unique else first[1], table)
        ids = fn(files, np.array(lines_, dtype=np.int64) if fn is _sites_by_unique else lines_, table)
        out.append((ids, list(table.items()), [type(k[1]) for k in table]))
    (a, ta, ka), (b, tb, kb) = out
    assert a.dtype == b.dtype == np.int32 and np.array_equal(a, b)
    assert ta == tb and ka == kb
