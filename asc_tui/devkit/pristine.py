"""The inputs as they were before the launch, for the golden.

A kernel can write into an input's GM buffer (by mistake, or an input it never loads): a golden
computed from the inputs after the launch then agrees with whatever the kernel wrote. So the
golden gets the values the kernel was given, and a changed input is a FAIL of its own.

No second copy per input, so an 80M-element case does not double its peak: a seeded input that
the inputs cache (`inputs.py`) keeps is compared with that untouched copy after the launch
(~0.05 s per 160 MB); any other input gets a CRC-32 before the launch and, when it changed, is
drawn again from its seed. A changed input gets its values back in place. A sample's inputs
are files (`SampleFiles`).
"""

from __future__ import annotations

import os
import shutil
import zlib
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from .precision import InputOverwrite

#: Elements per step of a comparison: the temporaries stay small for 80M-element inputs.
STEP = 1 << 20


def raw(arr: np.ndarray) -> np.ndarray:
    """The bytes of a contiguous array, as a flat uint8 view (no copy)."""
    return np.ascontiguousarray(arr).reshape(-1).view(np.uint8)


def crc(arr: np.ndarray) -> int:
    return zlib.crc32(raw(arr))


def same_bytes(a: np.ndarray, b: np.ndarray) -> bool:
    """Bit equality (NaN payloads and -0.0 included), in steps of the widest word that fits."""
    x, y = raw(a), raw(b)
    if x.size != y.size:
        return False
    for width in (8, 4, 2):
        if x.size % width == 0:
            x, y = x.view(f"u{width}"), y.view(f"u{width}")
            break
    return all(np.array_equal(x[i : i + STEP], y[i : i + STEP]) for i in range(0, x.size, STEP))


def describe(name: str, now: np.ndarray, was: np.ndarray) -> InputOverwrite:
    """Which elements of input `name` differ from what the kernel was given."""
    width = now.dtype.itemsize
    words = f"u{width}" if width in (1, 2, 4, 8) else "u1"
    x, y = raw(now).view(words), raw(was).view(words)
    changed, first = 0, -1
    for i in range(0, x.size, STEP):
        diff = x[i : i + STEP] != y[i : i + STEP]
        n = int(np.count_nonzero(diff))
        if n and first < 0:
            first = i + int(np.argmax(diff))
        changed += n
    per = max(x.size // max(now.size, 1), 1)  # words per element (1 unless an odd itemsize)
    first //= per
    flat_now, flat_was = now.reshape(-1), was.reshape(-1)
    return InputOverwrite(
        name, -(-changed // per), int(now.size), first, _num(flat_was[first]), _num(flat_now[first])
    )


def _num(v) -> float:
    try:
        return float(v)
    except (TypeError, ValueError):
        return float("nan")


@dataclass
class Originals:
    """What one run needs to give its golden the inputs as they were (taken before the launch)."""

    specs: dict  # input name -> TensorSpec, in the order the seeded draws were made
    kept: dict | None  # the inputs cache's untouched arrays (read only), or None
    crcs: dict  # input name -> CRC-32 before the launch (inputs not kept)
    seed: int

    @classmethod
    def before_launch(cls, specs: dict, arrays: dict, kept: dict | None, seed: int) -> Originals:
        kept = kept if kept is not None and all(k in kept for k in specs) else None
        crcs = {} if kept is not None else {k: crc(arrays[k]) for k in specs}
        return cls(specs, kept, crcs, seed)

    def restore(self, arrays: dict) -> tuple[InputOverwrite, ...]:
        """Put back in place every input the kernel changed; say which ones and how."""
        if self.kept is not None:
            changed = [k for k in self.specs if not same_bytes(arrays[k], self.kept[k])]
        else:
            changed = [k for k in self.specs if crc(arrays[k]) != self.crcs[k]]
        if not changed:
            return ()
        notes = []
        for name, was in self._originals(changed):
            now = arrays[name]
            note = describe(name, now, was)
            if self.kept is None and crc(was) != self.crcs[name]:
                note = replace(note, exact=False)  # a callable init that draws differently
            notes.append(note)
            np.copyto(now, was.reshape(now.shape), casting="no")
        return tuple(notes)

    def _originals(self, names: list[str]):
        """(name, the values it had) for `names`: the kept copy, else the seeded draw again (the
        draws are sequential, so every input before the last changed one is drawn again)."""
        if self.kept is not None:
            for name in names:
                yield name, self.kept[name]
            return
        rng = np.random.default_rng(self.seed)
        last = max(list(self.specs).index(n) for n in names)
        for i, (name, spec) in enumerate(self.specs.items()):
            if i > last:
                break
            arr = spec.generate(rng)
            if name in names:
                yield name, arr
            del arr


class SampleFiles:
    """The files a sample's gen_data.py wrote (its inputs and golden), as they were.

    A sample's golden comes from gen_data.py before main() runs, but main() can still write over
    those files (WriteFile of an input buffer the kernel changed, or of output/golden.bin), and
    verify_result.py and the precision check would read what it wrote. The host twin calls
    `before_write` first: the original is put aside (only then: no copy of files nobody writes)
    and `restore` puts it back before verification, with a note for each file that changed.
    """

    def __init__(self, build: Path, outputs: tuple[Path, ...]):
        self.build = build.resolve()
        skip = {p.resolve() for p in outputs}  # what main() is meant to write
        self.files = {p.resolve() for p in self.build.rglob("*") if p.is_file()} - skip
        self.stash = self.build.parent / ".asc-tui-originals"
        self.written: dict[Path, tuple] = {}  # file -> where main() first wrote it

    def before_write(self, path: str, where) -> None:
        p = (Path.cwd() / path).resolve()
        if p not in self.files or p in self.written:
            return
        dst = self.stash / p.relative_to(self.build)
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(p, dst)
        self.written[p] = where

    def restore(self) -> tuple[InputOverwrite, ...]:
        """Put back every file main() wrote over; a note for each whose bytes changed."""
        notes = []
        for p, (file, line, _col) in self.written.items():
            orig = self.stash / p.relative_to(self.build)
            was = np.fromfile(orig, np.uint8)
            now = np.fromfile(p, np.uint8) if p.is_file() else np.zeros(0, np.uint8)
            os.replace(orig, p)
            n = min(was.size, now.size)
            diff = was[:n] != now[:n]
            changed = int(np.count_nonzero(diff)) + abs(was.size - now.size)
            if not changed:
                continue
            first = int(np.argmax(diff)) if diff.any() else n
            notes.append(
                InputOverwrite(
                    str(p.relative_to(self.build)),
                    changed,
                    int(was.size),
                    first,
                    float(was[first]) if first < was.size else float("nan"),
                    float(now[first]) if first < now.size else float("nan"),
                    unit="bytes",
                    file=file,
                    line=line,
                )
            )
        return tuple(notes)
