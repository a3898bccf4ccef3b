"""Chip models as data: one TOML file per chip, shipped in `asc_tui/chips/`, or a user's path."""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path

from .. import PACKAGE_DIR
from ..tomlpos import TomlTextError, decode_text, key_position, parse_toml, table_line, value_position
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
    try:
        key = (str(path), path.stat().st_mtime)
        if key not in _cache:
            if path.is_dir():
                raise ChipError("a chip is a .toml file, not a directory", str(path))
            _cache[key] = parse_chip(_text_of(path), str(path))
    except OSError as exc:
        raise ChipError(f"cannot read the chip file: {exc.strerror or exc}", str(path)) from None
    return _cache[key]


def _text_of(path: Path) -> str:
    try:
        return decode_text(path.read_bytes())
    except TomlTextError as exc:
        raise ChipError(exc.message, str(path), exc.line, column=exc.column) from None


def parse_chip(text: str, path: str = "<chip>") -> ChipModel:
    try:
        data = parse_toml(text)
    except TomlTextError as exc:
        raise ChipError(f"malformed chip TOML: {exc.message}", path, exc.line, column=exc.column) from None
    _check_keys(data, text, path)
    for section, keys in _REQUIRED.items():
        sec = data.get(section)
        if not isinstance(sec, dict):
            raise ChipError(
                f"chip file has no [{section}] section", path, hint=f"required keys: {', '.join(keys)}"
            )
        missing = [k for k in keys if k not in sec]
        if missing:
            raise ChipError(
                f"[{section}] is missing {', '.join(missing)}", path, table_line(text, section), column=1
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


#: Every key a chip file may have, by table: a typo (`aivv`) is refused with a did-you-mean
#: instead of silently leaving the default in place. `[vector.cycles_per_repeat]` names vector
#: instructions, so any name goes there.
_KNOWN: dict[str, tuple[str, ...]] = {
    "chip": ("name", "clock_mhz", "arch"),
    "cores": ("aic", "aiv", "aiv_per_aic"),
    "memory": ("ub", "l1", "l0a", "l0b", "l0c", "l2", "bt", "fb", "ub_reserved"),
    "alignment": ("ub", "l1", "l0a", "l0b", "l0c", "bt"),
    "events": ("ids_per_type", "latency_cycles"),
    "dma": (
        "latency_cycles",
        "latency_per_active_core",
        "gm_read_bytes_per_cycle",
        "gm_write_bytes_per_cycle",
        "hbm_gbps",
        "l2_bytes_per_cycle",
        "l2_model",
        "atomic_extra_cycles",
    ),
    "vector": ("repeat_bytes", "startup_cycles", "max_repeat", "cycles_per_repeat"),
    "scalar": ("issue_cycles", "value_cycles", "gm_value_cycles"),
    "sync": ("sync_all_cycles",),
    "launch": ("overhead_us",),
    "cube": (
        "l1_to_l0a_bytes_per_cycle",
        "l1_to_l0b_bytes_per_cycle",
        "fixpipe_bytes_per_cycle",
        "fixpipe_latency_cycles",
        "mte1_latency_cycles",
        "mmad_startup_cycles",
        "startup_cycles",
        "cross_core_latency_cycles",
        "fp16_macs_per_cycle",
        "int8_macs_per_cycle",
    ),
    "hccl": ("latency_us", "link_gbps"),
}


def _check_keys(data: dict, text: str, path: str) -> None:
    """Only known tables and keys (`_KNOWN`), else a `ChipError` at the key with a did-you-mean."""
    for section, value in data.items():
        if section not in _KNOWN or not isinstance(value, dict):
            line, col = key_position(text, "", section) or (table_line(text, section), 1)
            if section in _KNOWN:
                what = f"{section} must be a table: [{section}] with its keys below it"
            else:
                kind = "table" if isinstance(value, dict) else "key"
                what = f"unknown {kind} {section!r}" + _did_you_mean(section, _KNOWN)
            raise ChipError(what, path, line, column=col)
        for key in value:
            if key not in _KNOWN[section]:
                line, col = _key_at(text, section, key)
                raise ChipError(
                    f"unknown key {key!r} in [{section}]" + _did_you_mean(key, _KNOWN[section]),
                    path,
                    line,
                    column=col,
                )
        per_op = value.get("cycles_per_repeat") if section == "vector" else None
        if per_op is not None and not isinstance(per_op, dict):
            line, col = _locate(text, "vector", "cycles_per_repeat")
            raise ChipError(
                "[vector] cycles_per_repeat must be a table of instruction = cycles", path, line, column=col
            )


def _did_you_mean(key: str, known) -> str:
    close = difflib.get_close_matches(key, list(known), 1)
    return f" (did you mean {close[0]!r}?)" if close else f"; known: {', '.join(known)}"


#: (section, key) -> (lowest, highest, must be > lowest, must be a whole number): the values a
#: chip can sanely have. Counts, sizes and divisors must be positive (0 cores would divide by
#: zero, 0 bandwidth would blame a DataCopy for a typo); latencies and overheads may be 0.
_RANGES: dict[tuple[str, str], tuple[float, float, bool, bool]] = {
    ("chip", "clock_mhz"): (0, 10_000, True, False),
    ("cores", "aic"): (0, 4096, True, True),
    ("cores", "aiv"): (0, 4096, True, True),
    ("cores", "aiv_per_aic"): (0, 64, True, True),
    **{("memory", k): (0, 1 << 40, True, True) for k in ("ub", "l1", "l0a", "l0b", "l0c", "l2", "bt", "fb")},
    ("memory", "ub_reserved"): (0, 1 << 40, False, True),
    **{("alignment", k): (0, 1 << 20, True, True) for k in ("ub", "l1", "l0a", "l0b", "l0c", "bt")},
    ("events", "ids_per_type"): (0, 1 << 16, True, True),
    ("events", "latency_cycles"): (0, 1e9, False, False),
    ("dma", "latency_cycles"): (0, 1e9, False, False),
    ("dma", "latency_per_active_core"): (0, 1e9, False, False),
    ("dma", "gm_read_bytes_per_cycle"): (0, 1 << 20, True, False),
    ("dma", "gm_write_bytes_per_cycle"): (0, 1 << 20, True, False),
    ("dma", "l2_bytes_per_cycle"): (0, 1 << 20, True, False),
    ("dma", "hbm_gbps"): (0, 1e6, True, False),
    ("dma", "atomic_extra_cycles"): (0, 1e9, False, False),
    ("vector", "repeat_bytes"): (0, 1 << 20, True, True),
    ("vector", "startup_cycles"): (0, 1e9, False, False),
    ("vector", "max_repeat"): (0, 1 << 20, True, True),
    ("scalar", "issue_cycles"): (0, 1e9, False, False),
    ("scalar", "value_cycles"): (0, 1e9, False, False),
    ("scalar", "gm_value_cycles"): (0, 1e9, False, False),
    ("sync", "sync_all_cycles"): (0, 1e9, False, False),
    ("launch", "overhead_us"): (0, 1e9, False, False),
    **{
        ("cube", k): (0, 1e9, False, False)
        for k in (
            "fixpipe_latency_cycles",
            "mte1_latency_cycles",
            "mmad_startup_cycles",
            "startup_cycles",
            "cross_core_latency_cycles",
        )
    },
    ("cube", "fp16_macs_per_cycle"): (0, 1 << 24, True, False),
    ("cube", "int8_macs_per_cycle"): (0, 1 << 24, True, False),
    ("hccl", "latency_us"): (0, 1e9, False, False),
    ("hccl", "link_gbps"): (0, 1e6, True, False),
}


def _check_values(data: dict, text: str, path: str) -> None:
    """Every number in range (see `_RANGES`; per-op cycles and [cube] rates positive), else a
    `ChipError` at the value's line and column."""
    checks = [(sec, key, *rng) for (sec, key), rng in _RANGES.items() if key in data.get(sec, {})]
    for op in data.get("vector", {}).get("cycles_per_repeat", {}):
        checks.append(("vector.cycles_per_repeat", op, 0, 1e9, True, False))
    for key in data.get("cube", {}):
        if key.endswith("bytes_per_cycle"):
            checks.append(("cube", key, 0, 1 << 20, True, False))
    for sec, key, lo, hi, strict, whole in checks:
        table = data
        for part in sec.split("."):
            table = table[part]
        v = table[key]
        ok = (
            isinstance(v, int if whole else (int, float))
            and not isinstance(v, bool)
            and v <= hi
            and (v > lo if strict else v >= lo)
        )
        if not ok:
            line, col = _locate(text, sec, key)
            kind = "whole number" if whole else "number"
            want = f"a positive {kind}" if strict else f"a non-negative {kind}"
            raise ChipError(
                f"[{sec}] {key} must be {want} up to {hi:g}, got {v!r} (column {col})",
                path,
                line,
                column=col,
            )
    if not isinstance(data["chip"]["name"], str) or not data["chip"]["name"].strip():
        line, col = _locate(text, "chip", "name")
        raise ChipError("[chip] name must be a non-empty string", path, line, column=col)


def _locate(text: str, section: str, key: str) -> tuple[int | None, int]:
    """Line and column of `key`'s value inside `[section]` (else the section's line)."""
    return value_position(text, section, key) or (table_line(text, section), 1)


def _key_at(text: str, section: str, key: str) -> tuple[int | None, int]:
    """Line and column of `key` itself inside `[section]` (else the section's line)."""
    return key_position(text, section, key) or (table_line(text, section), 1)
