"""Chip models as data: one TOML file per chip, shipped in `asc_tui/chips/`, or a user's path."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path

import tomli

from .. import PACKAGE_DIR
from ..tomlpos import value_position
from .errors import ChipError

CHIP_DIR = PACKAGE_DIR / "chips"
DEFAULT_CHIP = "ascend910b"

_REQUIRED = {
    "chip": ("name", "clock_mhz"),
    "cores": ("aic", "aiv"),
    "memory": ("ub", "l1", "l0a", "l0b", "l0c", "l2"),
    "alignment": ("ub", "l1", "l0a", "l0b", "l0c"),
    "events": ("ids_per_type", "latency_cycles"),
    "dma": ("latency_cycles", "gm_read_bytes_per_cycle", "gm_write_bytes_per_cycle", "hbm_gbps"),
    "vector": ("repeat_bytes", "startup_cycles", "max_repeat"),
    "scalar": ("issue_cycles", "value_cycles"),
    "launch": ("overhead_us",),
}


@dataclass(frozen=True)
class ChipModel:
    """Hardware facts and timing constants of one chip (units in the field names)."""

    name: str
    path: str
    clock_mhz: float
    aic: int
    aiv: int
    memory: dict[str, int]
    usable: dict[str, int]
    alignment: dict[str, int]
    event_ids: int
    event_latency: float
    dma_latency: float
    dma_latency_per_active_core: float
    gm_read_bpc: float
    gm_write_bpc: float
    hbm_gbps: float
    l2_bpc: float
    repeat_bytes: int
    vec_startup: float
    vec_cpr: dict[str, float]
    max_repeat: int
    scalar_issue: float
    scalar_value: float
    scalar_gm_value: float
    launch_overhead_us: float
    raw: dict = field(repr=False, compare=False, default_factory=dict)

    @property
    def hbm_bpc(self) -> float:
        """Whole-chip HBM bandwidth in bytes per cycle."""
        return self.hbm_gbps * 1e3 / self.clock_mhz

    def dma_latency_for(self, active_cores: int) -> float:
        """Fixed cycles of one DMA while `active_cores` cores of a wave share the HBM."""
        return self.dma_latency + self.dma_latency_per_active_core * max(active_cores - 1, 0)

    def cycles_to_us(self, cycles: float) -> float:
        return cycles / self.clock_mhz

    def vec_cycles_per_repeat(self, op: str) -> float:
        cpr = self.vec_cpr
        return cpr.get(op, cpr["default"])

    @cached_property
    def single_unit(self) -> ChipModel:
        """The chip as a vector-only or cube-only kernel sees it: all of UB. The framework keeps
        `ub_reserved` (256 B) back only in Cube+Vector fusion (mix) kernels (2201 spec page:
        "在Cube和Vector融合算子开发场景预留256B"), whose view `usable` is."""
        if self.usable.get("ub") == self.memory.get("ub"):
            return self
        return replace(self, usable={**self.usable, "ub": self.memory["ub"]})

    @cached_property
    def cube_timing(self) -> dict:
        """Cube-path constants from [cube], with the documented defaults (cycles, B/cycle)."""
        sec = self.section("cube")
        return {
            "l0a_bpc": float(sec.get("l1_to_l0a_bytes_per_cycle", 256)),
            "l0b_bpc": float(sec.get("l1_to_l0b_bytes_per_cycle", 128)),
            "fix_bpc": float(sec.get("fixpipe_bytes_per_cycle", 128)),
            "mte1_lat": float(sec.get("mte1_latency_cycles", 20)),
            "mmad_startup": float(sec.get("mmad_startup_cycles", 8)),
            "fix_lat": float(sec.get("fixpipe_latency_cycles", 60)),
        }

    def section(self, name: str) -> dict:
        """A raw TOML section (for later layers, e.g. the cube path)."""
        return self.raw.get(name, {})


def wave_cores(block_dim: int, wave: int, n_cores: int) -> int:
    """Cores busy in wave `wave` when `block_dim` blocks run on `n_cores` cores (1 if unknown)."""
    return min(n_cores, block_dim - wave * n_cores) if n_cores else 1


def available_chips() -> list[str]:
    return sorted(p.stem for p in CHIP_DIR.glob("*.toml"))


def resolve_chip_path(name_or_path: str | None) -> Path:
    ref = name_or_path or DEFAULT_CHIP
    p = Path(ref)
    if p.suffix == ".toml" or p.exists() or "/" in ref:
        if not p.exists():
            raise ChipError(f"chip file not found: {ref}")
        return p.resolve()
    candidate = CHIP_DIR / f"{ref.lower()}.toml"
    if not candidate.exists():
        raise ChipError(
            f"unknown chip {ref!r}; bundled chips: {', '.join(available_chips())} "
            "(or give the path of a .toml file)"
        )
    return candidate


_cache: dict[tuple[str, float], ChipModel] = {}


def load_chip(name_or_path: str | None = None) -> ChipModel:
    """Load (and cache by file and mtime) a chip model; errors name the file and line."""
    path = resolve_chip_path(name_or_path)
    key = (str(path), path.stat().st_mtime)
    if key not in _cache:
        _cache[key] = parse_chip(path.read_text(encoding="utf-8"), str(path))
    return _cache[key]


def parse_chip(text: str, path: str = "<chip>") -> ChipModel:
    try:
        data = tomli.loads(text)
    except tomli.TOMLDecodeError as exc:
        m = re.search(r"line (\d+)", str(exc))
        raise ChipError(f"malformed chip TOML: {exc}", path, int(m.group(1)) if m else None) from None
    for section, keys in _REQUIRED.items():
        sec = data.get(section)
        if not isinstance(sec, dict):
            raise ChipError(
                f"chip file has no [{section}] section", path, hint=f"required keys: {', '.join(keys)}"
            )
        missing = [k for k in keys if k not in sec]
        if missing:
            raise ChipError(
                f"[{section}] is missing {', '.join(missing)}", path, _line_of(text, f"[{section}]")
            )
    _check_values(data, text, path)
    c, mem, al = data["chip"], data["memory"], data["alignment"]
    reserved = data["memory"].get("ub_reserved", 0)
    usable = {k: int(v) for k, v in mem.items() if isinstance(v, int)}
    usable["ub"] = int(mem["ub"]) - int(reserved)
    vec = data["vector"]
    cpr = {"default": 2.0}
    cpr.update({k: float(v) for k, v in vec.get("cycles_per_repeat", {}).items()})
    dma = data["dma"]
    return ChipModel(
        name=str(c["name"]),
        path=path,
        clock_mhz=float(c["clock_mhz"]),
        aic=int(data["cores"]["aic"]),
        aiv=int(data["cores"]["aiv"]),
        memory={k: int(v) for k, v in mem.items() if isinstance(v, int)},
        usable=usable,
        alignment={k: int(v) for k, v in al.items()},
        event_ids=int(data["events"]["ids_per_type"]),
        event_latency=float(data["events"]["latency_cycles"]),
        dma_latency=float(dma["latency_cycles"]),
        dma_latency_per_active_core=float(dma.get("latency_per_active_core", 0.0)),
        gm_read_bpc=float(dma["gm_read_bytes_per_cycle"]),
        gm_write_bpc=float(dma["gm_write_bytes_per_cycle"]),
        hbm_gbps=float(dma["hbm_gbps"]),
        l2_bpc=float(dma.get("l2_bytes_per_cycle", dma["gm_read_bytes_per_cycle"])),
        repeat_bytes=int(vec["repeat_bytes"]),
        vec_startup=float(vec["startup_cycles"]),
        vec_cpr=cpr,
        max_repeat=int(vec["max_repeat"]),
        scalar_issue=float(data["scalar"]["issue_cycles"]),
        scalar_value=float(data["scalar"]["value_cycles"]),
        scalar_gm_value=float(data["scalar"].get("gm_value_cycles", data["scalar"]["value_cycles"])),
        launch_overhead_us=float(data["launch"]["overhead_us"]),
        raw=data,
    )


#: (section, key) -> (lowest, highest, must be > lowest): the values a chip can sanely have.
#: Divisors and bandwidths must be positive (0 would divide by zero or blame a DataCopy for a
#: bandwidth that is a typo); latencies and overheads may be 0.
_RANGES: dict[tuple[str, str], tuple[float, float, bool]] = {
    ("chip", "clock_mhz"): (0, 10_000, True),
    ("cores", "aic"): (0, 4096, False),
    ("cores", "aiv"): (0, 4096, False),
    **{("memory", k): (0, 1 << 40, True) for k in ("ub", "l1", "l0a", "l0b", "l0c", "l2", "bt", "fb")},
    ("memory", "ub_reserved"): (0, 1 << 40, False),
    **{("alignment", k): (0, 1 << 20, True) for k in ("ub", "l1", "l0a", "l0b", "l0c", "bt")},
    ("events", "ids_per_type"): (0, 1 << 16, True),
    ("events", "latency_cycles"): (0, 1e9, False),
    ("dma", "latency_cycles"): (0, 1e9, False),
    ("dma", "latency_per_active_core"): (0, 1e9, False),
    ("dma", "gm_read_bytes_per_cycle"): (0, 1 << 20, True),
    ("dma", "gm_write_bytes_per_cycle"): (0, 1 << 20, True),
    ("dma", "l2_bytes_per_cycle"): (0, 1 << 20, True),
    ("dma", "hbm_gbps"): (0, 1e6, True),
    ("vector", "repeat_bytes"): (0, 1 << 20, True),
    ("vector", "startup_cycles"): (0, 1e9, False),
    ("vector", "max_repeat"): (0, 1 << 20, True),
    ("scalar", "issue_cycles"): (0, 1e9, False),
    ("scalar", "value_cycles"): (0, 1e9, False),
    ("scalar", "gm_value_cycles"): (0, 1e9, False),
    ("launch", "overhead_us"): (0, 1e9, False),
}


def _check_values(data: dict, text: str, path: str) -> None:
    """Every number in range (see `_RANGES`; per-op cycles and [cube] rates positive), else a
    `ChipError` at the value's line and column."""
    checks = [(sec, key, *rng) for (sec, key), rng in _RANGES.items() if key in data.get(sec, {})]
    for op in data.get("vector", {}).get("cycles_per_repeat", {}):
        checks.append(("vector.cycles_per_repeat", op, 0, 1e9, True))
    for key in data.get("cube", {}):
        if key.endswith("bytes_per_cycle"):
            checks.append(("cube", key, 0, 1 << 20, True))
    for sec, key, lo, hi, strict in checks:
        table = data
        for part in sec.split("."):
            table = table[part]
        v = table[key]
        ok = (
            isinstance(v, (int, float))
            and not isinstance(v, bool)
            and v <= hi
            and (v > lo if strict else v >= lo)
        )
        if not ok:
            line, col = _locate(text, sec, key)
            want = "a positive number" if strict else "a non-negative number"
            raise ChipError(
                f"[{sec}] {key} must be {want} up to {hi:g}, got {v!r} (column {col})", path, line
            )

    cores = data.get("cores", {})
    if cores.get("aic", 0) + cores.get("aiv", 0) < 1:
        raise ChipError(
            "[cores] the chip needs at least one core (aic + aiv >= 1)",
            path,
            _locate(text, "cores", "aic")[0],
        )


def _locate(text: str, section: str, key: str) -> tuple[int | None, int]:
    """Line and column of `key`'s value inside `[section]` (else the section's line)."""
    return value_position(text, section, key) or (_line_of(text, f"[{section}]"), 1)


def _line_of(text: str, needle: str) -> int | None:
    for i, line in enumerate(text.splitlines(), 1):
        if needle in line:
            return i
    return None
