"""A block's record tuples become the same columns whichever way they are converted."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from asc_tui.npu.columns import _columns_of, _columns_of_tuples
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
