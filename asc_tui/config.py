"""Project configuration: `asc-tui.toml`, or `[tool.asc-tui]` in `pyproject.toml`.

Keys: operators (dir), chip, case, theme, keymap (binding id -> keys), thresholds (ship/optimise
ratios vs baseline, regression fraction), worker_timeout (seconds, the one default for the CLI and
the workbench), worker_memory_mb (the worker's address-space cap), tune (constant name -> the
values `asc-tui tune` sweeps for a sample's `constexpr`/`#define`; an `asc-tui.toml` in a sample
directory with only `[tune]` is that sample's sidecar). A mistake is reported as a
`ConfigError` naming the file, line and column, so the user can jump straight to it.
`resolve_operators_dir` and `watched_extras` say where the workbench and `asc-tui watch` look.
"""

from __future__ import annotations

import difflib
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import BUNDLED_OPERATORS
from .tomlpos import TomlTextError, decode_text, parse_toml

KEYS = (
    "operators",
    "chip",
    "case",
    "theme",
    "keymap",
    "thresholds",
    "worker_timeout",
    "worker_memory_mb",
    "tune",
)
#: Seconds before a runaway operator is stopped, in the workbench and on the command line alike.
DEFAULT_WORKER_TIMEOUT = 60.0


def resolve_timeout(requested: float | None = None, config: Config | None = None) -> float:
    """Seconds before a runaway run is stopped: the one asked for (a flag, a request), else the
    config's `worker_timeout`, else `DEFAULT_WORKER_TIMEOUT`. The one rule of every front end."""
    if requested is not None:
        return float(requested)
    return config.worker_timeout if config is not None else DEFAULT_WORKER_TIMEOUT


def default_memory_mb() -> int:
    """Half the machine's RAM: a runaway allocation fails in the operator, not in the machine."""
    import os

    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2) >> 20
    except (ValueError, OSError, AttributeError):
        return 8192


THRESHOLD_KEYS = ("ship", "optimise", "regression")


@dataclass(frozen=True)
class Thresholds:
    """Verdicts vs baseline: ratio ≥ ship ships, ≥ optimise should optimise, below must.

    `regression`: a run slower than the previous one by more than this fraction is flagged.
    """

    ship: float = 0.95
    optimise: float = 0.90
    regression: float = 0.01  # 1%: the emulator is deterministic (bench uses it too)


class ConfigText(str):
    """A config string that remembers where it was written (`written`: file, line, column), so a
    value that proves wrong only later (a `case` the operator lacks) is reported at the config
    line, not in the operator. It travels to the worker process as the value itself."""

    written: tuple[str, int, int]

    def __new__(cls, value: str, written: tuple[str, int, int]):
        self = super().__new__(cls, value)
        self.written = written
        return self

    def __getnewargs__(self):
        return str(self), self.written


class ConfigSeconds(float):
    """A config duration (seconds) that remembers where it was written, like `ConfigText`: a
    timeout that stops a run names the `worker_timeout` line when no user line is to blame."""

    written: tuple[str, int, int]

    def __new__(cls, value: float, written: tuple[str, int, int]):
        self = super().__new__(cls, value)
        self.written = written
        return self

    def __getnewargs__(self):
        return float(self), self.written


def written_at(value) -> tuple[str, int, int] | None:
    """(file, line, column) of a value read from the config, None for any other value."""
    return getattr(value, "written", None)


@dataclass(frozen=True)
class Config:
    operators: str | None = None
    chip: str | None = None
    case: str | None = None
    theme: str | None = None
    keymap: dict[str, str] = field(default_factory=dict)
    thresholds: Thresholds = field(default_factory=Thresholds)
    worker_timeout: float = DEFAULT_WORKER_TIMEOUT
    worker_memory_mb: int = field(default_factory=default_memory_mb)
    tune: dict[str, tuple] = field(default_factory=dict)  # NAME -> values to sweep (samples)
    source: str | None = None  # the file it came from


@dataclass(frozen=True)
class ConfigProblem:
    file: str
    line: int
    column: int
    message: str

    def format(self) -> str:
        return f"{self.file}:{self.line}:{self.column}: {self.message}"


class ConfigError(Exception):
    """One or more problems in a config file, each with line and column."""

    def __init__(self, problems: list[ConfigProblem]):
        self.problems = problems
        super().__init__("\n".join(p.format() for p in problems))


def find_config(start: Path | None = None) -> Path | None:
    """The nearest asc-tui.toml, or pyproject.toml with a [tool.asc-tui] table, upwards. A
    pyproject.toml that does not parse but mentions the table counts as having it, so its parse
    error is reported (`load_config`) instead of the table being ignored."""
    here = Path(start or Path.cwd()).resolve()
    if here.is_file():
        here = here.parent
    for d in (here, *here.parents):
        cand = d / "asc-tui.toml"
        if cand.is_file():
            return cand
        py = d / "pyproject.toml"
        if py.is_file() and _has_tool_table(py):
            return py
    return None


#: `[tool.asc-tui]`, `[ tool . "asc-tui" ]`, `[tool.asc-tui.thresholds]`, `tool.asc-tui.chip = ...`,
#: and a header whose bracket was never closed: whatever a TOML parser would read as the table.
_TOOL_TABLE = re.compile(r"""^\s*\[?\s*tool\s*\.\s*["']?asc-tui["']?\s*(\]|\.|=|$)""", re.M)


def _has_tool_table(path: Path) -> bool:
    try:
        text = decode_text(path.read_bytes())
    except OSError:
        return False
    except TomlTextError:
        return b"asc-tui" in path.read_bytes()
    try:
        data = parse_toml(text)
    except TomlTextError:
        return bool(_TOOL_TABLE.search(text))  # a broken file: report it if it means us
    return isinstance(data.get("tool"), dict) and "asc-tui" in data["tool"]


def load_config(path: Path | None = None, start: Path | None = None) -> Config:
    """Read the config (found from `start` when `path` is None); defaults if there is none."""
    path = path or find_config(start)
    if path is None:
        return Config()
    path = Path(path)
    try:
        text = decode_text(path.read_bytes())
        data = parse_toml(text)
    except OSError as exc:
        raise ConfigError([ConfigProblem(str(path), 1, 1, f"cannot read: {exc.strerror or exc}")]) from None
    except TomlTextError as exc:
        raise ConfigError([ConfigProblem(str(path), exc.line or 1, exc.column or 1, exc.message)]) from None
    prefix: tuple[str, ...] = ()
    if path.name == "pyproject.toml":
        table = data.get("tool", {}).get("asc-tui", {})
        prefix = ("tool", "asc-tui")
        if not isinstance(table, dict):
            line, col = _Locator(text, ("tool",)).find(("asc-tui",))
            raise ConfigError([ConfigProblem(str(path), line, col, "[tool.asc-tui] must be a table")])
        data = table
    return _validate(data, path, text, prefix)


def _validate(data: dict, path: Path, text: str, prefix: tuple[str, ...]) -> Config:
    loc = _Locator(text, prefix)
    problems: list[ConfigProblem] = []

    def bad(key: tuple[str, ...], message: str) -> None:
        line, col = loc.find(key)
        problems.append(ConfigProblem(str(path), line, col, message))

    values: dict[str, Any] = {}
    for key, value in data.items():
        if key not in KEYS:
            close = difflib.get_close_matches(key, KEYS, 1)
            bad(
                (key,),
                f"unknown key {key!r}"
                + (f" (did you mean {close[0]!r}?)" if close else f"; known: {', '.join(KEYS)}"),
            )
            continue
        if key in ("operators", "chip", "case", "theme"):
            if not isinstance(value, str) or not value:
                bad((key,), f"{key} must be a non-empty string, got {value!r}")
                continue
            problem = _check_path_value(key, value, path)
            if problem:
                bad((key,), problem)
                continue
            if key == "chip" and (value.endswith(".toml") or "/" in value) and not Path(value).is_absolute():
                value = str(path.parent / value)  # a chip file is relative to the config, like operators
            if key == "case":
                value = ConfigText(value, (str(path), *loc.find((key,))))
        elif key == "worker_timeout":
            if (
                isinstance(value, bool)
                or not isinstance(value, (int, float))
                or not math.isfinite(value)
                or value <= 0
            ):
                bad((key,), f"worker_timeout must be a positive, finite number of seconds, got {value!r}")
                continue
            value = ConfigSeconds(value, (str(path), *loc.find((key,))))
        elif key == "worker_memory_mb":
            if isinstance(value, bool) or not isinstance(value, int) or value < 256:
                bad((key,), f"worker_memory_mb must be a whole number of MB, at least 256, got {value!r}")
                continue
        elif key == "keymap":
            if not isinstance(value, dict):
                bad((key,), 'keymap must be a table of binding id = "keys"')
                continue
            for bid, keys in value.items():
                if not isinstance(keys, str) or not keys.strip():
                    bad((key, bid), f'keymap.{bid} must be a string like "f5" or "r,f5"')
            value = {k: v for k, v in value.items() if isinstance(v, str) and v.strip()}
        elif key == "tune":
            if not isinstance(value, dict):
                bad((key,), "tune must be a table of NAME = [values] (e.g. TILE_LENGTH = [2048, 4096])")
                continue
            table = {}
            for name, vals in value.items():
                vals = vals if isinstance(vals, list) else [vals]
                if not vals or not all(
                    isinstance(v, (int, float, str)) and not isinstance(v, bool) for v in vals
                ):
                    bad((key, name), f"tune.{name} must be a value or a non-empty list of numbers")
                else:
                    table[name] = tuple(vals)
            value = table
        elif key == "thresholds":
            if not isinstance(value, dict):
                bad((key,), "thresholds must be a table (ship, optimise, regression)")
                continue
            th = {}
            for tk, tv in value.items():
                if tk not in THRESHOLD_KEYS:
                    bad((key, tk), f"unknown threshold {tk!r}; known: {', '.join(THRESHOLD_KEYS)}")
                elif isinstance(tv, bool) or not isinstance(tv, (int, float)) or not 0 <= tv <= 2:
                    bad((key, tk), f"thresholds.{tk} must be a number in 0..2, got {tv!r}")
                else:
                    th[tk] = float(tv)
            value = Thresholds(**th)
        values[key] = value
    if problems:
        raise ConfigError(problems)
    return Config(**values, source=str(path))


def _check_path_value(key: str, value: str, config_path: Path) -> str | None:
    """`operators` must be a directory and `chip` a known chip or an existing .toml (both
    relative to the config file), so a typo is reported here, with its line, not at run time."""
    if key == "operators":
        where = Path(value) if Path(value).is_absolute() else config_path.parent / value
        if not where.is_dir():
            return f"operators directory not found: {value} (looked for {where})"
    elif key == "chip":
        from .npu.chip import available_chips, resolve_chip_path
        from .npu.errors import ChipError

        ref = value
        if (value.endswith(".toml") or "/" in value) and not Path(value).is_absolute():
            ref = str(config_path.parent / value)
        try:
            resolve_chip_path(ref)
        except ChipError:
            return f"unknown chip {value!r}; bundled chips: {', '.join(available_chips())} (or a .toml path)"
    return None


class _Locator:
    """Finds where a (sub)key is written in TOML text: 1-based line and column."""

    _HEADER = re.compile(r"^\s*\[+\s*([^\]]+?)\s*\]+\s*(#.*)?$")

    def __init__(self, text: str, prefix: tuple[str, ...]):
        self.lines = text.splitlines()
        self.prefix = prefix

    def find(self, key: tuple[str, ...]) -> tuple[int, int]:
        table: tuple[str, ...] = ()
        full = self.prefix + key
        fallback = (1, 1)
        for i, line in enumerate(self.lines, 1):
            m = self._HEADER.match(line)
            if m:
                table = tuple(p.strip().strip('"') for p in m.group(1).split("."))
                if table == full:
                    return i, line.index("[") + 1
                if table == self.prefix:
                    fallback = (i, 1)
                continue
            rest = full[len(table) :] if full[: len(table)] == table else None
            if not rest:
                continue
            dotted = r"\s*\.\s*".join(re.escape(k) for k in rest)
            m = re.match(rf"^(\s*)[\"']?{dotted}[\"']?\s*=", line)
            if m:
                return i, len(m.group(1)) + 1
            if len(rest) > 1:  # inline table: keymap = { rerun = "f5" }
                m = re.match(rf"^\s*{re.escape(rest[0])}\s*=\s*\{{", line)
                if m:
                    col = line.find(rest[-1], m.end())
                    return i, (col + 1) if col >= 0 else 1
        return fallback


def resolve_operators_dir(path: str | None, config: Config) -> Path:
    """PATH, else the config's `operators`, else ./operators, else the bundled operators."""
    from_config = config.operators
    if from_config and config.source and not Path(from_config).is_absolute():
        from_config = str(Path(config.source).parent / from_config)  # relative to the config
    for cand in (path, from_config, "operators"):
        if cand and Path(cand).is_dir():
            return Path(cand).resolve()
        if cand and Path(cand).is_file():
            return Path(cand).resolve().parent
    return BUNDLED_OPERATORS.resolve()


def watched_extras(config_source: str | None, chip: str | None) -> list[str]:
    """Files besides the operators whose saves rerun everything: the config, a chip TOML."""
    out = [config_source] if config_source else []
    if chip and chip.endswith(".toml") and Path(chip).is_file():
        out.append(str(Path(chip).resolve()))
    return out
