"""msprof-op compatible CSV files: write a Profile as `msprof op` would, and read such a directory.

Written (one row per block, column names as msprof op spells them; `ai*` is `aiv` for vector
kernels and `aic` when the run used the cube, MTE1 or FixPipe):

* OpBasicInfo.csv: Op Name, Op Type, Task Duration(us), Block Dim, Mix Block Dim, Device Id,
  Pid, Current Freq, Rated Freq (Mix Block Dim, Device Id and Pid are "NA": no device).
* PipeUtilization.csv: block_id, sub_block_id, ai*_time(us), ai*_total_cycles, and for every
  pipe the run used ai*_<pipe>_time(us), ai*_<pipe>_ratio (pipe ∈ vec, cube, scalar, fixpipe,
  mte1, mte2, mte3).
* Memory.csv: block_id, sub_block_id, ai*_time(us), ai*_total_cycles, ai*_mte{1,2,3}_
  instructions, ai*_mte{1,2,3}_ratio, read_main_memory_datas(KB), write_main_memory_datas(KB),
  ai*_main_mem_read_bw(GB/s), ai*_main_mem_write_bw(GB/s); vector kernels also
  GM_to_UB_datas(KB), UB_to_GM_datas(KB), aiv_gm_to_ub_bw(GB/s), aiv_ub_to_gm_bw(GB/s).
  Bandwidths are GiB/s over the block's time, as msprof computes them.
* ResourceConflictRatio.csv: block_id, sub_block_id, ai*_time(us), ai*_total_cycles,
  ai*_<pipe>_wait_ratio for vec/cube/mte1/mte2/mte3. (Bank-conflict columns are not modelled.)

Numbers are written with `repr`, so export → import → export is byte-identical and the imported
per-block figures equal the original ones.
"""

from __future__ import annotations

import csv
import glob
import os
from pathlib import Path

from ...npu.errors import OperatorError
from . import advice as rules
from .breakdown import CATEGORIES, CoreProfile, breakdown_items
from .profiler import CoreBalance, PipelineReport, Profile, ProfileSource, bottleneck_of
from .roofline import roofline

FILES = ("OpBasicInfo.csv", "PipeUtilization.csv", "Memory.csv", "ResourceConflictRatio.csv")
PIPE_ORDER = ("vec", "cube", "scalar", "fixpipe", "mte1", "mte2", "mte3")
WAIT_PIPES = ("cube", "vec", "mte1", "mte2", "mte3")
GIB = 1024.0**3


class MsprofError(OperatorError):
    kind = "msprof"


def _num(x) -> str:
    if x is None:
        return "NA"
    if isinstance(x, bool):
        return str(int(x))
    if isinstance(x, int):
        return str(x)
    return repr(float(x))


def _freq(mhz: float) -> int | float:
    return int(mhz) if float(mhz).is_integer() else mhz


def _write(path: Path, header: list[str], rows: list[list]) -> None:
    tmp = path.with_suffix(".csv.tmp")
    with open(tmp, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(header)
        for r in rows:
            w.writerow([v if isinstance(v, str) else _num(v) for v in r])
    os.replace(tmp, path)


def write_dir(p: Profile, directory: str | os.PathLike) -> list[str]:
    """Write the four CSV files into `directory` (created); returns their paths."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    x = "aic" if p.core_kind == "AIC" else "aiv"
    label = "cube0" if x == "aic" else "vector0"
    pipes = [q for q in PIPE_ORDER if any(q in c.busy_us for c in p.cores)]
    common = ["block_id", "sub_block_id", f"{x}_time(us)", f"{x}_total_cycles"]

    def head(c: CoreProfile) -> list:
        return [c.block, label, c.time_us, c.cycles]

    op_type = "cube" if x == "aic" else "vector"
    _write(
        d / "OpBasicInfo.csv",
        [
            "Op Name",
            "Op Type",
            "Task Duration(us)",
            "Block Dim",
            "Mix Block Dim",
            "Device Id",
            "Pid",
            "Current Freq",
            "Rated Freq",
        ],
        [
            [
                p.operator,
                op_type,
                p.time_us,
                p.block_dim,
                "NA",
                "NA",
                "NA",
                _freq(p.clock_mhz),
                _freq(p.clock_mhz),
            ]
        ],
    )
    hdr = list(common)
    for q in pipes:
        hdr += [f"{x}_{q}_time(us)", f"{x}_{q}_ratio"]
    rows = []
    for c in p.cores:
        r = head(c)
        for q in pipes:
            r += [c.busy_us.get(q, 0.0), c.ratio.get(q, 0.0)]
        rows.append(r)
    _write(d / "PipeUtilization.csv", hdr, rows)
    mtes = [q for q in ("mte1", "mte2", "mte3") if q in pipes]
    hdr = list(common)
    for q in mtes:
        hdr += [f"{x}_{q}_instructions", f"{x}_{q}_ratio"]
    hdr += [
        "read_main_memory_datas(KB)",
        "write_main_memory_datas(KB)",
        f"{x}_main_mem_read_bw(GB/s)",
        f"{x}_main_mem_write_bw(GB/s)",
    ]
    if x == "aiv":
        hdr += ["GM_to_UB_datas(KB)", "UB_to_GM_datas(KB)", "aiv_gm_to_ub_bw(GB/s)", "aiv_ub_to_gm_bw(GB/s)"]
    rows = []
    for c in p.cores:
        r = head(c)
        for q in mtes:
            r += [c.instructions.get(q, 0), c.ratio.get(q, 0.0)]
        rd, wr = c.read_bytes / 1024.0, c.write_bytes / 1024.0
        rbw, wbw = _bw(c.read_bytes, c.time_us), _bw(c.write_bytes, c.time_us)
        r += [rd, wr, rbw, wbw]
        if x == "aiv":
            r += [rd, wr, rbw, wbw]
        rows.append(r)
    _write(d / "Memory.csv", hdr, rows)
    waits = [q for q in WAIT_PIPES if q in pipes]
    hdr = common + [f"{x}_{q}_wait_ratio" for q in waits]
    _write(
        d / "ResourceConflictRatio.csv",
        hdr,
        [head(c) + [c.wait_ratio.get(q, 0.0) for q in waits] for c in p.cores],
    )
    return [str(d / f) for f in FILES]


def _bw(nbytes: float, time_us: float) -> float:
    return nbytes / GIB / (time_us * 1e-6) if time_us > 0 else 0.0


# ---- reading -----------------------------------------------------------------------------------
def _find(directory: Path, stem: str) -> Path | None:
    exact = directory / f"{stem}.csv"
    if exact.exists():
        return exact
    hits = sorted(glob.glob(str(directory / f"{stem}_*.csv")))
    return Path(hits[-1]) if hits else None


def _locate(directory: Path) -> Path:
    if not directory.is_dir():
        raise MsprofError(f"not a directory: {directory}")
    if _find(directory, "OpBasicInfo") is not None:
        return directory
    hits = sorted(directory.glob("**/OpBasicInfo*.csv"))
    if not hits:
        raise MsprofError(
            f"no OpBasicInfo.csv under {directory}",
            hint="give the OPPROF_* directory msprof op wrote, or one written by "
            "`asc-tui profile --msprof-dir`",
        )
    return hits[-1].parent


def _rows(path: Path | None) -> list[dict]:
    if path is None:
        return []
    with open(path, newline="", encoding="utf-8-sig") as fh:
        reader = csv.reader(fh)
        try:
            header = [h.strip() for h in next(reader)]
        except StopIteration:
            return []
        out = []
        for values in reader:
            if not any(v.strip() for v in values):
                continue
            out.append({h: v.strip() for h, v in zip(header, values) if h})
        return out


def _f(row: dict, key: str) -> float | None:
    v = row.get(key)
    if v is None or v == "" or v.upper() == "NA":
        return None
    try:
        return float(v)
    except ValueError:
        return None


def read_dir(directory: str | os.PathLike, chip=None) -> Profile:
    """Read a msprof op output directory (real or ours) into a Profile (source="msprof")."""
    d = _locate(Path(directory))
    basic = _rows(_find(d, "OpBasicInfo"))
    if not basic:
        raise MsprofError(f"{d / 'OpBasicInfo.csv'} has no data row")
    b = basic[0]
    pipe_rows = _rows(_find(d, "PipeUtilization"))
    mem_rows = {r.get("block_id"): r for r in _rows(_find(d, "Memory"))}
    rc_rows = {r.get("block_id"): r for r in _rows(_find(d, "ResourceConflictRatio"))}
    x = _prefix(pipe_rows or list(mem_rows.values()))
    cores = []
    for i, r in enumerate(pipe_rows):
        bid = r.get("block_id", str(i))
        m, rc = mem_rows.get(bid, {}), rc_rows.get(bid, {})
        busy, ratio, wait, instr = {}, {}, {}, {}
        for q in PIPE_ORDER:
            t = _f(r, f"{x}_{q}_time(us)")
            if t is None:
                continue
            busy[q] = t
            ratio[q] = _f(r, f"{x}_{q}_ratio") or 0.0
            wait[q] = _f(rc, f"{x}_{q}_wait_ratio") or 0.0
            n = _f(m, f"{x}_{q}_instructions")
            instr[q] = int(n) if n is not None else 0
        rd = _f(m, "read_main_memory_datas(KB)")
        if rd is None:
            rd = _f(m, "GM_to_UB_datas(KB)") or _f(m, "GM_to_L1_datas(KB)") or 0.0
        wr = _f(m, "write_main_memory_datas(KB)")
        if wr is None:
            wr = _f(m, "UB_to_GM_datas(KB)") or _f(m, "L0C_to_GM_datas(KB)") or 0.0
        block = int(float(bid)) if bid not in (None, "", "NA") else i
        cores.append(
            CoreProfile(
                block=block,
                core=block,
                wave=0,
                time_us=_f(r, f"{x}_time(us)") or 0.0,
                cycles=_f(r, f"{x}_total_cycles") or 0.0,
                busy_us=busy,
                ratio=ratio,
                wait_ratio=wait,
                instructions=instr,
                read_bytes=rd * 1024.0,
                write_bytes=wr * 1024.0,
            )
        )
    return _profile(b, tuple(cores), x, chip)


def _prefix(rows: list[dict]) -> str:
    aiv = sum(1 for r in rows if _f(r, "aiv_time(us)") is not None)
    aic = sum(1 for r in rows if _f(r, "aic_time(us)") is not None)
    return "aic" if aic > aiv else "aiv"


def _profile(b: dict, cores: tuple[CoreProfile, ...], x: str, chip) -> Profile:
    time_us = _f(b, "Task Duration(us)") or 0.0
    mhz = _f(b, "Current Freq") or _f(b, "Rated Freq") or (chip.clock_mhz if chip else 0.0)
    block_dim = int(_f(b, "Block Dim") or len(cores) or 1)
    n = max(len(cores), 1)
    kernel_us = max((c.time_us for c in cores), default=0.0)
    times: dict[str, float | None] = {}
    for key, _, _ in CATEGORIES:
        vals = [c.busy_us[key] for c in cores if key in c.busy_us]
        times[key] = sum(vals) / n if vals else (None if key == "sync_wait" else 0.0)
    items = breakdown_items(times, kernel_us)
    denom = n * kernel_us if kernel_us > 0 else 1.0
    util = {q: sum(c.busy_us.get(q, 0.0) for c in cores) / denom for q in PIPE_ORDER}
    waits = {q: sum(c.wait_ratio.get(q, 0.0) * c.time_us for c in cores) / denom for q in PIPE_ORDER}
    cube = x == "aic"
    chip_cores = (chip.aic if cube else chip.aiv) if chip is not None else None
    slow = max(cores, key=lambda c: c.time_us) if cores else None
    balance = CoreBalance(
        len(cores),
        chip_cores,
        1,
        len(cores),
        slow.block if slow else 0,
        slow.time_us if slow else 0.0,
        sum(c.time_us for c in cores) / n,
    )
    gm_read = sum(c.read_bytes for c in cores)
    gm_write = sum(c.write_bytes for c in cores)
    count = sum(c.instructions.get("mte2", 0) + c.instructions.get("mte3", 0) for c in cores)
    roof, fixed_share = None, None
    if chip is not None:
        fixed_us = chip.launch_overhead_us
        roof = roofline(chip, 0.0, gm_read + gm_write, time_us, use_cube=cube, fixed_us=fixed_us)
        busy = sum(c.busy_us.get("mte2", 0.0) + c.busy_us.get("mte3", 0.0) for c in cores)
        if busy > 0 and count:
            active = min(len(cores), chip_cores or len(cores))
            fixed_share = min(count * chip.dma_latency_for(active) / chip.clock_mhz / busy, 1.0)
    facts = rules.Facts(
        utilisation=util,
        wait_ratios=waits,
        overlap=None,
        cores_used=len(cores),
        chip_cores=chip_cores,
        core_kind=x.upper(),
        waves=1,
        last_wave_cores=len(cores),
        balance=balance.ratio if cores else None,
        dma_mean_bytes=(gm_read + gm_write) / count if count else None,
        dma_fixed_share=fixed_share,
        uses_cube=cube,
        bound=roof.bound if roof else None,
        roof_fraction=roof.fraction if roof else None,
        capacity={},
        kernel_us=kernel_us,
        launch_overhead_us=max(time_us - kernel_us, 0.0),
    )
    blocked = {q: sum(c.wait_ratio.get(q, 0.0) * c.time_us for c in cores) / n for q in PIPE_ORDER}
    pipeline = PipelineReport(util, waits, None, None, balance, rules.advise(facts), blocked)
    return Profile(
        source=ProfileSource.MSPROF,
        operator=b.get("Op Name", "kernel"),
        case=None,
        chip=chip.name if chip is not None else None,
        params={},
        shapes={},
        emulation=None,
        time_us=time_us,
        kernel_us=kernel_us,
        clock_mhz=mhz,
        block_dim=block_dim,
        breakdown=items,
        bottleneck=bottleneck_of(items),
        roofline=roof,
        pipeline=pipeline,
        lines=(),
        cores=cores,
        gm_read=gm_read,
        gm_write=gm_write,
        core_kind=x.upper(),
    )


__all__ = ["write_dir", "read_dir", "FILES", "MsprofError"]
