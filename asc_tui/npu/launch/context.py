"""What the blocks of one launch share: the per-launch context `Run` (log, warnings, sanitizer,
L2 and shared-HBM state, the switches a `configure` callback may set) and the GM arguments."""

from __future__ import annotations

from dataclasses import dataclass

from .. import state
from ..chip import ChipModel
from ..cores import CoreType
from ..memory.gm import GM_ADDR, GmBuffer
from ..memory.lockstep import Groups


@dataclass(frozen=True)
class RunWarning:
    kind: str
    message: str
    file: str
    line: int
    block: int
    count: int = 1

    def to_dict(self) -> dict:
        return {
            "kind": self.kind,
            "message": self.message,
            "file": self.file,
            "line": self.line,
            "block": self.block,
            "count": self.count,
        }


class Run:
    """Per-launch context shared by all blocks (log, warnings, sanitizer, L2 state).

    Every attribute is declared here. A `configure` callback given to `launch` may change the
    switches (L2, lineage, sanitizer) or hand in an HCCL context before any block runs; the
    kernel API keeps its per-launch state here (`hccl`, `mmad_widened`, `wide`).
    """

    __slots__ = (
        "chip",
        "numeric",
        "block_dim",
        "core_type",
        "san",
        "log",
        "_warnings",
        "peak",
        "l2",
        "l2_counts",
        "l2_record",
        "l2_tally",
        "l2_enabled",
        "mmad_widened",
        "lineage",
        "wide",
        "hccl",
        "cores_made",
        "hbm_plan",
        "hbm_shared",
        "hbm_passes",
        "groups",
        "hbm_xf",
        "replay",
        "extrapolate",
        "blocks",
        "learned",
        "known",
        "clock_read",
        "read_data",
    )

    def __init__(
        self, chip: ChipModel, numeric: bool, block_dim: int, sanitizer=None, core_type=CoreType.AIV
    ):
        self.chip = chip
        self.numeric = numeric
        self.block_dim = block_dim
        self.core_type = CoreType(core_type)
        self.san = sanitizer
        self.log: list[tuple] = []
        self._warnings: dict = {}
        self.peak: dict[str, int] = {}
        # the L2 model of cube launches (npu/memory/l2.py): the model, the pre-pass read counts, whether
        # this launch is the counting pre-pass itself, whether it counts its own reads too (its
        # counts are guessed: npu/memory/l2guess.py), and a switch to turn L2 off
        self.l2 = None
        self.l2_counts = None
        self.l2_record = False
        self.l2_tally = False
        self.l2_enabled = True
        # Mmad operands widened in this launch, reused when their raw fractals recur
        # (ascendc/mmad_operands.Widened)
        self.mmad_widened = None
        # keep cube operands in L1/L0 as GM lineage rather than bytes (ascendc/lineage.py), and
        # the fp32 twins of GM buffers they are read from: (buffer id, dtype, version) ->
        # (twin, grids widened so far) (ascendc/mmad_operands.wide_grid)
        self.lineage = True
        self.wide = None
        # this rank's collective context (ascendc/sync/hccl.HcclContext): handed in by a multi-rank
        # run (devkit/debug/deadlock.py), else made on first GetHcclContext as a world of one
        self.hccl = None
        # the shared HBM (npu/memory/hbm.py): cores made so far (a core's index into `hbm_plan`), the
        # per-core transfer durations this pass follows (None: uncontended), whether to share
        # HBM at all, the passes it took, and each finished core's (owner, transfers)
        self.cores_made = 0
        self.hbm_plan = None
        self.hbm_shared = True
        self.hbm_passes = 1
        self.groups = Groups()  # the blocks in lockstep groups, as they close (npu/memory/lockstep.py)
        self.hbm_xf = None  # (hbm.Transfers, their durations this pass, per-block offsets)
        # copy the records of blocks that provably repeat a template's stream (npu/replay/replay.py);
        # False runs every block step by step (the reference the replay tests compare against)
        self.replay = True
        # extrapolate loops whose scheduler state repeats up to a time shift (npu/extrapolate/periodic.py);
        # False runs every iteration step by step
        self.extrapolate = True
        # the blocks as cooperative threads (npu/coop.py) when they may wait for each other
        # (SyncAll, all-core CrossCoreSetFlag): set by the launcher for multi-block launches
        self.blocks = None
        # the guards of this launch's templates by block (`learned`); a timing-only rerun under
        # the shared HBM gets the first pass's (`known`, npu/memory/shared_hbm.py) unless the kernel
        # read the clock (`clock_read`, GetSystemCycle: its path may change with the times) or
        # data into its Python (`read_data`, GetValue or a C++ `*p` of real data: the rerun
        # reads shadows, so its path may differ)
        self.learned: dict = {}
        self.known: dict | None = None
        self.clock_read = False
        self.read_data = False

    def warn(self, kind: str, message: str, fr) -> None:
        key = (kind, fr.f_code.co_filename, fr.f_lineno)
        w = self._warnings.get(key)
        if w is None:
            block = state.core.block if state.core is not None else -1
            self._warnings[key] = [kind, message, fr.f_code.co_filename, fr.f_lineno, block, 1]
        else:
            w[5] += 1

    def warnings(self) -> tuple[RunWarning, ...]:
        return tuple(RunWarning(*w) for w in self._warnings.values())

    def log_entry(self, core, fr, text: str, level: str) -> None:
        self.log.append((core.ts, core.block, "scalar", fr.f_code.co_filename, fr.f_lineno, text, level))


def make_gm(name: str, dtype, count: int, data=None) -> GM_ADDR:
    """Wrap an operator input/output as a GM_ADDR (data=None for a shadow tensor)."""
    return GM_ADDR(GmBuffer(name, dtype, count, data))


__all__ = ["Run", "RunWarning", "make_gm"]
