"""What a sample directory's run adds to its `RunReport`, as one frozen value (not a dict)."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any


@dataclass(frozen=True, kw_only=True)
class SampleRun:
    """A sample's own figures: its launches (kernel, line, blocks, time_us in µs), main()'s
    stdout and exit code, the verify script's exit and output, gen_data.py's seconds and output,
    why asc-tui's precision check did not run (`precision`), and a status word set when the run
    stopped short ("FAIL", "OUT OF SCOPE"). `emulations` (one per launch) stay in the process."""

    launches: tuple[dict[str, Any], ...] = ()
    verify: dict[str, Any] | None = None  # {"exit": int, "output": str}
    stdout: str = ""
    exit_code: int | None = None
    gen_data_s: float | None = None
    gen_data_output: str | None = None
    precision: str | None = None
    status: str | None = None
    emulations: tuple = ()

    @classmethod
    def of(cls, d: dict[str, Any]) -> SampleRun:
        """From the fields `run_sample` gathers as it goes (or a JSON document's)."""
        names = {f.name for f in fields(cls)}
        given = {k: v for k, v in d.items() if k in names}
        for k in ("launches", "emulations"):
            if k in given:
                given[k] = tuple(given[k] or ())
        return cls(**given)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (`emulations` left out: the report carries the last one)."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "emulations"} | {
            "launches": [dict(ln) for ln in self.launches]
        }
