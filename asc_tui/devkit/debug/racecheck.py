"""racecheck: RAW / WAR / WAW between pipes of one core on overlapping memory, unordered.

Happens-before is tracked with a vector clock per pipe whose entries are record indices (the
position of an instruction in `core.rec`, increasing in program order):

- an instruction on pipe p is issued by the scalar unit, so it is ordered after everything the
  scalar unit has done or waited for: VC[p] ⊔= VC[S] (with VC[S][S] = last scalar record);
- SetFlag(src→dst) snapshots VC[src] (plus the scalar's), WaitFlag joins it into VC[dst];
  the TQue calls do the same with their implied events (EnQue/DeQue, FreeTensor/AllocTensor);
- PipeBarrier(PIPE_ALL) joins every pipe into every pipe.

Scalar stores (`SetValue`) get a lane of their own: a scalar load stalls the scalar unit until
its data is back, so later instructions are ordered after it, but a store is not visible to the
other pipes until an event from PIPE_S (S_V, S_MTE2, S_MTE3...) or a PIPE_ALL barrier orders it.

An access on pipe p conflicts with an earlier one on pipe q ≠ p when their byte ranges overlap,
one of them writes, and VC[p][q] is below the earlier access's record index. Shadow state is a
short list of accesses per memory; a newer access by the same pipe that covers an older one of
the same kind (or a write covering a read) replaces it, which keeps the lists small and loses no
race (anything unordered with the older one is unordered with the newer one).

Between blocks only SyncAll orders (everything any block did before it comes before everything
any block does after it), so GM bytes one block writes and another block reads or writes between
the same two SyncAlls are a race too — unless both are atomic writes (SetAtomicAdd...), which
combine in any order. Each block's GM accesses are merged, per SyncAll epoch,
into contiguous ranges per buffer and, when the block ends, checked against the union of the
earlier blocks' ranges (bisect over sorted, merged lists). Strided accesses are left out of this
check: their first-to-last extent would overlap the neighbouring blocks' tiles.
"""

from __future__ import annotations

from bisect import bisect_right

from ...ascendc.atomic import atomic_of
from ...ascendc.enums import N_PIPES, PIPE_NAMES
from ...ascendc.memory.tensors import GlobalTensor
from .findings import Finding
from .memcheck import byte_offset, tensor_name

S = 0
SST = N_PIPES  # the scalar-store lane
ATOMIC = "atomic"  # GM writes under SetAtomicAdd/Max/Min: they do not race with each other
#: kind of a block's GM access -> the earlier blocks' kinds it races with
_AGAINST = {True: (True, False, ATOMIC), False: (True, ATOMIC), ATOMIC: (True, False)}
LANES = N_PIPES + 1
LANE_NAMES = (*PIPE_NAMES, "scalar")


def _join(a: list, b: list, upto: int = LANES) -> None:
    for i in range(upto):
        if b[i] > a[i]:
            a[i] = b[i]


class RaceCheck:
    tool = "racecheck"

    def __init__(self, san):
        self.san = san
        self.core = None
        # GM ranges by (buffer id, epoch) -> {True: written, False: read}: of the blocks that
        # ended, and of the running one. The epoch counts the SyncAlls a block passed: ranges
        # of different epochs are ordered by a SyncAll between them.
        self.gm_prior: dict = {}
        self.gm_block: dict = {}
        self.gm_names: dict = {}
        self.epoch = 0

    _PARKED = ("core", "vc", "sst", "cur", "shadow", "events", "enq", "rel", "gm_block", "epoch")

    def park(self):
        st = tuple(getattr(self, a, None) for a in self._PARKED)
        self.core, self.gm_block, self.epoch = None, {}, 0
        return st

    def resume(self, st) -> None:
        for a, v in zip(self._PARKED, st):
            setattr(self, a, v)

    def block_sync(self, core) -> None:
        self.epoch += 1

    def _reset(self, core) -> None:
        self.core = core
        self.vc = [[-1] * LANES for _ in range(LANES)]
        self.sst = -1  # record index of the last scalar store
        self.cur = -1  # record index of the instruction whose accesses we are seeing
        self.shadow: dict = {}
        self.events: dict = {}
        self.enq: dict = {}
        self.rel: dict = {}

    def _snap(self, core, p: int) -> list:
        """What an event set on pipe p now carries: p's past and the scalar unit's past
        (its stores only when the event is set from PIPE_S itself)."""
        v = list(self.vc[p])
        _join(v, self.vc[S], N_PIPES)
        if core.last[p] > v[p]:
            v[p] = core.last[p]
        if core.last[S] > v[S]:
            v[S] = core.last[S]
        if p == S and self.sst > v[SST]:
            v[SST] = self.sst
        return v

    def _issue(self, core, p: int) -> None:
        """An instruction on pipe p was issued now: it is ordered after the scalar's past."""
        v = self.vc[p]
        _join(v, self.vc[S], N_PIPES)
        if core.last[S] > v[S]:
            v[S] = core.last[S]
        if p == S and self.sst > v[SST]:
            v[SST] = self.sst

    # ---- hooks ---------------------------------------------------------------------------------
    def access(self, core, t, start, count, is_write, fr, span=False) -> None:
        if core is not self.core:
            self._reset(core)
        rec = core.rec
        idx = len(rec) - 1
        if idx < 0:
            return
        p = rec[idx][0]
        if idx != self.cur:
            self.cur = idx
            self._issue(core, p)
            self.vc[p][p] = idx
        lane = p
        if p == S and is_write:
            lane = SST
            self.sst = idx
        isz = t.dtype.itemsize
        if type(t) is GlobalTensor:
            key = ("gm", id(t.buffer))
            lo = (t.start + start) * isz
            if not span:  # a strided extent would overlap other blocks' tiles
                self._gm_note(t, lo, lo + count * isz, is_write, fr)
        else:
            key = t.mem
            lo = t.offset + start * isz
        hi = lo + count * isz
        if hi <= lo:
            return
        entries = self.shadow.get(key)
        if entries is None:
            entries = self.shadow[key] = []
        mine = self.vc[p]
        keep = []
        for e in entries:
            elo, ehi, ep, eidx, ew = e[0], e[1], e[2], e[3], e[4]
            if ehi <= lo or elo >= hi:
                keep.append(e)
                continue
            if ep != lane:
                if (ew or is_write) and mine[ep] < eidx and not (p == S and ep == SST):
                    self._race(core, t, start, count, is_write, fr, lane, e)
                keep.append(e)
            elif not (elo >= lo and ehi <= hi and (is_write or not ew)):
                keep.append(e)
        keep.append((lo, hi, lane, idx, is_write, fr.f_code.co_filename, fr.f_lineno, rec[idx][3]))
        self.shadow[key] = keep

    def set_flag(self, core, key, fr) -> None:
        if core is not self.core:
            self._reset(core)
        src = int(key[0].value[0])
        self.events.setdefault(key, []).append(self._snap(core, src))

    def wait_flag(self, core, key, fr) -> None:
        if core is not self.core:
            self._reset(core)
        q = self.events.get(key)
        if q:
            dst = int(key[0].value[1])
            self._issue(core, dst)
            _join(self.vc[dst], q.pop(0))

    def barrier(self, core, pipe, fr) -> None:
        if core is not self.core:
            self._reset(core)
        if pipe is not None:
            return
        everything = [-1] * LANES
        for p in range(N_PIPES):
            _join(everything, self._snap(core, p))
        for p in range(LANES):
            self.vc[p] = list(everything)

    def queue(self, core, que, t, op, fr) -> None:
        if core is not self.core:
            self._reset(core)
        pipes = getattr(que, "pipes", None)
        slot = getattr(t, "slot", None)
        if not pipes or slot is None:
            return
        prod, cons = int(pipes[0]), int(pipes[1])
        sid = id(slot)
        if op == "enque":
            self.enq[sid] = self._snap(core, prod)
        elif op == "deque":
            v = self.enq.pop(sid, None)
            if v is not None:
                self._issue(core, cons)
                _join(self.vc[cons], v)
        elif op == "free":
            self.rel[sid] = self._snap(core, cons)
        elif op == "alloc":
            v = self.rel.get(sid)
            if v is not None:
                self._issue(core, prod)
                _join(self.vc[prod], v)

    def end_block(self, core) -> None:
        self.core = None
        for (buf, epoch), kinds in self.gm_block.items():
            prior = self.gm_prior.setdefault((buf, epoch), {True: [], False: [], ATOMIC: []})
            for kind, ranges in kinds.items():
                for lo, hi, line, file in ranges:
                    for other_kind in _AGAINST[kind]:
                        hit = _overlap(prior[other_kind], lo, hi)
                        if hit is not None:
                            is_write, other_write = kind is not False, other_kind is not False
                            self._block_race(core, buf, lo, hi, is_write, line, file, other_write, hit)
                            break
            for is_write, ranges in kinds.items():
                prior[is_write] = _merge(
                    prior[is_write], [(lo, hi, line, file, core.block) for lo, hi, line, file in ranges]
                )
        self.gm_block = {}
        self.epoch = 0

    def _gm_note(self, t, lo: int, hi: int, is_write: bool, fr) -> None:
        if hi <= lo:
            return
        buf = id(t.buffer)
        kinds = self.gm_block.get((buf, self.epoch))
        if kinds is None:
            kinds = self.gm_block[buf, self.epoch] = {True: [], False: [], ATOMIC: []}
            self.gm_names[buf] = t.name
        ranges = kinds[ATOMIC if is_write and atomic_of(self.core) is not None else is_write]
        if ranges and ranges[-1][1] == lo:
            last = ranges[-1]
            ranges[-1] = (last[0], hi, last[2], last[3])
        else:
            ranges.append((lo, hi, fr.f_lineno, fr.f_code.co_filename))

    def _block_race(self, core, buf, lo, hi, is_write, line, file, other_write, hit) -> None:
        kind = "race-waw" if is_write and other_write else ("race-war" if is_write else "race-raw")
        first = max(lo, hit[0])
        name = self.gm_names.get(buf) or "gm"
        self.san.report(
            Finding(
                "racecheck",
                kind,
                file,
                line,
                f"block {core.block} {'writes' if is_write else 'reads'} GM bytes "
                f"[{first}, {min(hi, hit[1])}) of '{name}' that block {hit[4]} "
                f"{'writes' if other_write else 'reads'} at line {hit[2]}; blocks run in parallel "
                "with no ordering between them",
                block=core.block,
                tensor=name,
                memory="gm",
                offset=first,
                access="Write" if is_write else "Read",
                size=min(hi, hit[1]) - first,
                other=f"block {hit[4]} {'write' if other_write else 'read'} at line {hit[2]}",
            )
        )

    def _race(self, core, t, start, count, is_write, fr, p, e) -> None:
        kind = "race-waw" if is_write and e[4] else ("race-raw" if not is_write else "race-war")
        first = "write" if e[4] else "read"
        isz = t.dtype.itemsize
        self.san.report(
            Finding(
                "racecheck",
                kind,
                fr.f_code.co_filename,
                fr.f_lineno,
                f"{LANE_NAMES[p]} {'writes' if is_write else 'reads'} memory that {LANE_NAMES[e[2]]} "
                f"{'writes' if e[4] else 'reads'} in {e[7]} at line {e[6]} with no SetFlag/WaitFlag "
                f"(or queue event) ordering the {first} before this access",
                block=core.block,
                tensor=tensor_name(t, fr),
                memory="gm" if type(t) is GlobalTensor else t.mem,
                offset=byte_offset(t, start),
                access="Write" if is_write else "Read",
                size=count * isz,
                pipe=LANE_NAMES[p],
                other=f"{LANE_NAMES[e[2]]} {first} at line {e[6]}",
            )
        )


def _overlap(ranges: list, lo: int, hi: int):
    """The first of the sorted, disjoint `ranges` overlapping [lo, hi), or None."""
    i = bisect_right(ranges, (lo, float("inf"))) - 1
    for j in (i, i + 1):
        if 0 <= j < len(ranges):
            r = ranges[j]
            if r[0] < hi and r[1] > lo:
                return r
    return None


def _merge(ranges: list, new: list) -> list:
    """Union of sorted disjoint ranges with new ones (the earlier range's line is kept)."""
    out: list = []
    for r in sorted(ranges + new):
        if out and r[0] <= out[-1][1]:
            last = out[-1]
            if r[1] > last[1]:
                out[-1] = (last[0], r[1], last[2], last[3], last[4])
        else:
            out.append(r)
    return out
