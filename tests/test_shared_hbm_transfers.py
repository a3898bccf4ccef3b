"""A block's GM transfers as the shared HBM reads them (npu/memory/shared_hbm.py `_block_transfers`):
the noted ones (L2 hits, Fixpipe writes, every transfer of a planned pass) stand for their
records, the other MTE2/MTE3 work records are plain DataCopies — the same rows, to the bit, as
the set-membership form it had before (`_reference`)."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from asc_tui.npu.chip import load_chip
from asc_tui.npu.memory.shared_hbm import _block_transfers

CHIP = load_chip("ascend910b")

records = st.lists(
    st.tuples(st.integers(0, 6), st.integers(0, 2), st.integers(0, 1 << 20)),  # pipe, kind, bytes
    min_size=1,
    max_size=80,
)


def _reference(columns: dict, noted: list, chip) -> np.ndarray:
    plain = _block_transfers(columns, [], chip)  # (unchanged: every MTE2/MTE3 work record)
    if not noted:
        return plain
    told = np.array(noted, dtype=np.float64).reshape(-1, 4)
    keep = plain[~np.isin(plain[:, 0].astype(np.int64), told[:, 0].astype(np.int64))]
    both = np.concatenate([keep, told])
    return both[np.argsort(both[:, 0], kind="stable")]


@given(recs=records, data=st.data())
def test_a_blocks_transfers_are_its_noted_ones_and_its_plain_copies(recs, data):
    pipe, kind, nbytes = (np.array(c) for c in zip(*recs))
    columns = {"pipe": pipe.astype(np.int8), "kind": kind.astype(np.int8), "nbytes": nbytes.astype(np.int64)}
    at = sorted(data.draw(st.sets(st.integers(0, len(recs) - 1))))
    noted = [
        (i, data.draw(st.floats(0, 1000)), data.draw(st.integers(0, 1 << 20)), data.draw(st.floats(1, 200)))
        for i in at
    ]
    got, want = _block_transfers(columns, noted, CHIP), _reference(columns, noted, CHIP)
    assert got.shape == want.shape and got.tobytes() == want.tobytes()
