"""The counting pre-pass of the L2 model (npu/memory/l2.py): a cube launch run once timing-only
on shadow buffers to count how often each GM chunk is read, and what it found (`Prepass`), which
the real pass's reads are priced by and later launches may guess from (npu/memory/l2guess.py)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import OperatorError
from .gm import shadows


@dataclass(frozen=True)
class Prepass:
    """What the counting pre-pass found: reads per chunk of each buffer, and every region
    (buffer name, base, nd, rows, row bytes, stride, matrix stride) it read."""

    counts: dict[str, np.ndarray]
    regions: list[tuple]
    # L2 capacity -> L2-hit bytes per read of each region (`L2Model._region_hits`): the same
    # for every pass run on these counts (a full launch's HBM passes, later launches guessing them)
    hits: dict[int, dict] = field(default_factory=dict, compare=False, repr=False)
    # (times each region was read, bytes of each buffer read) it was counted from (`recorded`)
    tally: tuple | None = field(default=None, compare=False, repr=False)
    # L2 capacity -> those hits by region shape, then base address (`hits_by_base`)
    by_base: dict[int, dict] = field(default_factory=dict, compare=False, repr=False)

    def hits_by_base(self, capacity: int) -> dict[tuple, dict]:
        """`hits[capacity]` by region shape (buffer name, nd, rows, row bytes, stride, matrix
        stride), then base address (`L2Model._same_bases`)."""
        by_shape = self.by_base.get(capacity)
        if by_shape is None:
            by_shape = self.by_base[capacity] = {}
            for (name, base, *shape), hit in self.hits.get(capacity, {}).items():
                known = by_shape.get((name, *shape))
                if known is None:
                    known = by_shape[(name, *shape)] = {}
                known[base] = hit
        return by_shape


def prepass_counts(
    launch_fn, kernel, gm_args, tiling, block_dim: int, chip, timeout_s=None
) -> Prepass | None:
    """Run the kernel once in timing-only mode, counting reads per GM chunk.

    Control flow of a kernel does not depend on emulated time, so the counts are exact for the
    real pass. Buffers are shadows and no hooks are installed: the pre-pass never writes the
    user's arrays, logs, or reaches a debugger.
    """
    seen: list = []

    def setup(run):
        run.l2_record = True
        run.san = None
        seen.append(run)

    try:
        launch_fn(
            kernel,
            shadows(gm_args),
            tiling,
            block_dim,
            chip,
            numeric=False,
            configure=setup,
            timeout_s=timeout_s,
        )
    except OperatorError as exc:
        if exc.kind == "timeout":
            raise
        # e.g. control flow that depends on GM data (shadows read as zeros): the real pass
        # reports genuine errors; L2 falls back to first-read-misses for this launch
        return None
    run = seen[0] if seen else None
    l2 = run.l2 if run is not None else None
    return l2.recorded() if l2 is not None else None
