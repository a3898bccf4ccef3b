"""The emulator owns its vocabulary (pipes, positions, records) and the kernel API re-exports it.
Which layer may import which is tests/test_layering.py's job."""

from __future__ import annotations

import numpy as np

from asc_tui import ascendc
from asc_tui.npu import pipes, positions, records
from asc_tui.npu.columns import close_columns


def test_the_kernel_api_re_exports_the_emulators_pipes_and_positions():
    assert ascendc.Pipe is pipes.Pipe
    assert ascendc.PIPE_MTE2 is pipes.Pipe.PIPE_MTE2
    assert ascendc.TPosition is positions.TPosition
    assert ascendc.QuePosition is positions.TPosition


def test_pipe_indices_and_names_agree():
    assert [p.value for p in pipes.Pipe][: pipes.N_PIPES] == list(range(pipes.N_PIPES))
    assert (pipes.S, pipes.V, pipes.M, pipes.MTE1, pipes.MTE2, pipes.MTE3, pipes.FIX) == tuple(
        range(pipes.N_PIPES)
    )
    assert pipes.PIPE_NAMES[pipes.Pipe.PIPE_MTE2] == "mte2"


def test_the_record_constructor_lays_a_record_out_as_its_columns_expect():
    class Frame:
        class f_code:  # noqa: N801 - mimics a frame
            co_filename = "k.py"

        f_lineno = 12

    rec = records.record(pipes.MTE2, 1.0, 5.0, "DataCopy", Frame, nbytes=64)
    assert len(rec) == len(records.RECORD.names)
    wait = records.record(pipes.V, 5.0, 7.0, "DeQue", Frame, kind=records.KIND_WAIT, link=0)
    cols = close_columns([rec, wait], {}, {})
    assert set(cols) == set(records.RECORD_COLUMNS)
    assert cols["kind"].tolist() == [records.Kind.WORK, records.Kind.WAIT]
    assert cols["nbytes"].tolist() == [64, 0]
    assert cols["link"].tolist() == [-1, 0]
    assert np.array_equal(cols["pipe"], [pipes.MTE2, pipes.V])
