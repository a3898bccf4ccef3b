"""The run's time and overlap figures with their definitions: one source for every front end.

* task time (µs) = kernel time + launch overhead, the duration msprof reports and the figure
  benchmarks, history and the header compare;
* kernel time (µs) = kernel cycles / clock (MHz), the span the timeline draws;
* overlap = |compute ∩ data movement| / min(|compute|, |data movement|), per core and summed
  over blocks (`devkit.breakdown`): the share of the shorter activity hidden under the other.

The CLI, its JSON, the header, the Profile pane and the Timeline all print these strings, so a
reader always sees which figure a number is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...npu.results import EmulationResult
from .breakdown import block_unions, columns, overlap_share, pipe_totals, record_slots

TASK_DEF = "task = kernel + launch overhead"
OVERLAP_DEF = "compute∩movement / shorter"


@dataclass(frozen=True)
class Timing:
    task_us: float
    kernel_us: float
    launch_us: float
    kernel_cycles: float
    clock_mhz: float
    overlap: float | None  # see OVERLAP_DEF; None when compute or movement is absent

    def parts(self, unit: str = "µs") -> list[str]:
        """The split as phrases a narrow screen may wrap between (never inside a number)."""
        return [
            f"task {self.task_us:.3f} {unit}",
            f"= kernel {self.kernel_us:.3f} {unit}",
            f"({self.kernel_cycles:,.0f} cycles @ {self.clock_mhz:g} MHz)",
            f"+ launch {self.launch_us:.3f} {unit}",
        ]

    def split(self, unit: str = "µs") -> str:
        """`task 5.694 µs = kernel 2.694 µs (4,850 cycles @ 1800 MHz) + launch 3.000 µs`."""
        return " ".join(self.parts(unit))

    def overlap_text(self) -> str:
        return overlap_text(self.overlap)

    def to_dict(self) -> dict[str, Any]:
        return {
            "task_us": self.task_us,
            "kernel_us": self.kernel_us,
            "launch_us": self.launch_us,
            "kernel_cycles": self.kernel_cycles,
            "clock_mhz": self.clock_mhz,
            "overlap": self.overlap,
            "definitions": {"task_us": TASK_DEF, "overlap": OVERLAP_DEF},
        }


def overlap_parts(value: float | None) -> list[str]:
    """The overlap and its definition as two phrases a narrow screen may put on two lines."""
    return [f"overlap {value:.0%}", f"({OVERLAP_DEF})"] if value is not None else ["overlap n/a"]


def overlap_text(value: float | None) -> str:
    return " ".join(overlap_parts(value))


#: `timing(em)` computes the overlap itself; a caller that has it passes it instead
UNKNOWN: Any = object()


def timing(em: EmulationResult, overlap_value: float | None = UNKNOWN) -> Timing:
    """The split and the overlap; `overlap_value` is `overlap(em)` when the caller already has
    it (the profile computes the same figure: one pass over the records, not two)."""
    ov = overlap(em) if overlap_value is UNKNOWN else overlap_value
    return Timing(em.time_us, em.kernel_us, em.launch_overhead_us, float(em.kernel_cycles), em.clock_mhz, ov)


def overlap(em: EmulationResult, block: int | None = None) -> float | None:
    """OVERLAP_DEF over all blocks (the profile's own figure), or for one block."""
    if block is None:
        return pipe_totals(em, columns(em)).overlap
    b = em.blocks[block]  # (the profile's per-block figure: `PipeTotals.block_overlaps`)
    _, _, compute, move, either = block_unions(record_slots(b.kind, b.pipe), b.start, b.end)
    return overlap_share(compute, move, either)
