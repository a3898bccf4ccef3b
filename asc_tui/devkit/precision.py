"""Compare a kernel's outputs with the golden reference: the figures operator authors quote.

Verdict: PASS when cosine ≥ 0.999 and every element is within atol + rtol·|want| for its dtype;
WARN when cosine is in [0.99, 0.999) (or cosine passes but the element bound does not);
FAIL below 0.99, or on any NaN/Inf the golden does not have. `reason` says which in words.

NaN/Inf come first: a cosine over the finite elements only would read 1.0 for an output that is
half NaN, so when the output has NaN/Inf the golden does not, the cosine is invalid — NaN here,
null in JSON with `cosine_invalid` giving the reason — and never reads as a match.

An input the kernel wrote into is a FAIL whatever the outputs say (`InputOverwrite`): the golden
sees the inputs as they were before the launch (devkit/pristine.py), and a kernel that writes its
inputs is not the operator the golden describes.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field

import numpy as np

from ..ascendc.dtypes import as_dtype, dtype_name
from ..npu.numbers.widen import widened

#: (atol, rtol) per output dtype; operators override with PRECISION = {"float16": (atol, rtol)}.
DEFAULT_THRESHOLDS = {
    "float16": (1e-3, 1e-3),
    "bfloat16": (8e-3, 8e-3),
    "float32": (1e-5, 1e-5),
}
PASS_COSINE, WARN_COSINE = 0.999, 0.99
#: Elements per step of `compare`: 1 MB of float32, so each of its ~20 passes stays in cache
#: (80M fp16 elements: 2x faster than 4M-element steps).
CHUNK = 1 << 18


@dataclass(frozen=True)
class OutputPrecision:
    name: str
    dtype: str
    max_abs_error: float
    mean_rel_error: float
    cosine_similarity: float
    within_threshold: bool
    atol: float
    rtol: float
    nan: int
    inf: int
    verdict: str
    worst: list = field(default_factory=list)  # [(flat index, got, want)]
    reason: str = ""  # why the verdict, in words
    cosine_invalid: str | None = None  # why cosine_similarity is NaN (not computable), if it is

    def to_dict(self) -> dict:
        d = asdict(self)
        head = {k: d.pop(k) for k in ("name", "dtype", "nan", "inf")}  # NaN/Inf counts first
        if self.cosine_invalid is not None:
            d["cosine_similarity"] = None
        for k in ("max_abs_error", "mean_rel_error"):
            d[k] = _json_float(d[k])
        d["worst"] = [[i, _json_value(g), _json_value(w)] for i, g, w in self.worst]
        return {**head, **d}


def _json_float(x: float) -> float | None:
    """Valid JSON has no NaN/Infinity: a figure that is not finite becomes null."""
    return x if np.isfinite(x) else None


def _json_value(x: float) -> float | str:
    """An element's value: the number, or "NaN" / "Infinity" / "-Infinity" as text."""
    if np.isfinite(x):
        return x
    return "NaN" if np.isnan(x) else ("Infinity" if x > 0 else "-Infinity")


@dataclass(frozen=True)
class InputOverwrite:
    """An input the kernel (or a sample's main()) wrote into; the golden saw it as it was."""

    name: str
    changed: int  # elements (a sample's file: bytes) that differ from what the kernel was given
    count: int
    first: int  # flat index of the first that differs
    was: float
    now: float
    unit: str = "elements"
    file: str | None = None  # where it was written, when known (a sample's WriteFile)
    line: int | None = None
    exact: bool = True  # False: a callable init drew other values again, which the golden saw

    @property
    def message(self) -> str:
        by = f" by {os.path.basename(self.file)}:{self.line}" if self.file and self.line else ""
        if self.unit == "elements":
            what, first = f"input {self.name!r}", f"[{self.first}]: {self.was:g} -> {self.now:g}"
            saw = "the golden saw it as it was before the launch"
        else:  # a sample's file
            what, first = f"{self.name} (written by scripts/gen_data.py)", f"at byte {self.first}"
            saw = "verify and the golden read it as gen_data.py wrote it"
        text = f"{what} overwritten{by}: {self.changed} of {self.count} {self.unit} changed"
        text += f" (first {first}); {saw}"
        if not self.exact:
            text += ", as far as its init draws the same values again (it does not)"
        return text

    def to_dict(self) -> dict:
        d = asdict(self)
        d["was"], d["now"] = _json_value(self.was), _json_value(self.now)
        d["message"] = self.message
        return d


@dataclass(frozen=True)
class PrecisionReport:
    outputs: tuple[OutputPrecision, ...]
    overwritten: tuple[InputOverwrite, ...] = ()  # inputs the kernel wrote into: FAIL

    @property
    def verdict(self) -> str:
        if self.overwritten:
            return "FAIL"
        order = {"PASS": 0, "WARN": 1, "FAIL": 2}
        return max((o.verdict for o in self.outputs), key=order.get, default="PASS")

    @property
    def made_nonfinite(self) -> bool:
        """Some output holds NaN/Inf where the golden is finite: the kernel made them."""
        return any(o.cosine_invalid is not None for o in self.outputs)

    def _worst(self, key: str, lo: bool = False) -> float:
        vals = [getattr(o, key) for o in self.outputs]
        if not vals:
            return 0.0 if not lo else 1.0
        return min(vals) if lo else max(vals)

    @property
    def reason(self) -> str:
        """The verdict in words: the worst output's reason (named when there are several)."""
        order = {"PASS": 0, "WARN": 1, "FAIL": 2}
        worst = max(self.outputs, key=lambda o: order[o.verdict], default=None)
        if worst is None:
            text = "no outputs"
        else:
            text = worst.reason if len(self.outputs) == 1 else f"{worst.name}: {worst.reason}"
        return "; ".join([*(o.message for o in self.overwritten), text])

    def to_dict(self) -> dict:
        invalid = [o for o in self.outputs if o.cosine_invalid is not None]
        return {
            "nan": sum(o.nan for o in self.outputs),
            "inf": sum(o.inf for o in self.outputs),
            "max_abs_error": _json_float(self._worst("max_abs_error")),
            "mean_rel_error": _json_float(self._worst("mean_rel_error")),
            "cosine_similarity": None if invalid else self._worst("cosine_similarity", lo=True),
            "cosine_invalid": invalid[0].cosine_invalid if invalid else None,
            "verdict": self.verdict,
            "reason": self.reason,
            "outputs": [o.to_dict() for o in self.outputs],
            "inputs_overwritten": [o.to_dict() for o in self.overwritten],
        }


@dataclass(frozen=True)
class NonFiniteOrigin:
    """The first non-finite value the kernel produced: instruction, line, block, element, value."""

    op: str
    file: str
    line: int
    block: int
    element: int  # index in the written tensor
    value: str  # "inf", "-inf" or "nan"
    tensor: str | None = None
    from_input: bool = False  # the inputs in GM already held it (nothing in the kernel made it)

    def describe(self) -> str:
        where = f"{os.path.basename(self.file)}:{self.line}, block {self.block}, element {self.element}"
        if self.from_input:
            return f"the input already holds {self.value}: first read by {self.op} at {where}"
        what = "produced NaN" if self.value == "nan" else f"overflowed to {self.value}"
        return f"{self.op} {what} at {where}"

    def to_dict(self) -> dict:
        return {**asdict(self), "message": self.describe()}


def thresholds_for(dtype, overrides: dict | None = None) -> tuple[float, float]:
    name = dtype_name(as_dtype(dtype))
    if overrides and name in overrides:
        return tuple(overrides[name])
    if name in DEFAULT_THRESHOLDS:
        return DEFAULT_THRESHOLDS[name]
    return (0.0, 0.0)  # integers: exact


def compare(
    name: str, got: np.ndarray, want: np.ndarray, overrides: dict | None = None, n_worst: int = 5
) -> OutputPrecision:
    """Error figures of one output. Works in float32 for ≤16-bit dtypes (exact), in chunks with
    float64 accumulation, so an 80M-element output stays fast and small."""
    dt = as_dtype(got.dtype)
    atol, rtol = thresholds_for(dt, overrides)
    work = np.float32 if dt.itemsize <= 2 and dt.kind in "fV" or dt.name == "bfloat16" else np.float64
    g_all = np.asarray(got).reshape(-1)
    w_all = np.asarray(want).reshape(-1)
    size = g_all.size
    nan = inf = bad_golden = unexpected = 0
    max_abs = 0.0
    rel_sum, rel_n = 0.0, 0
    dot = ng = nw = 0.0
    within = True
    worst: list[tuple[float, int, float, float]] = []
    for lo in range(0, size, CHUNK):
        g = widened(g_all[lo : lo + CHUNK], work)  # (1- and 2-byte types by table)
        w = widened(w_all[lo : lo + CHUNK], work)
        fg, fw = np.isfinite(g), np.isfinite(w)
        finite = bool(fg.all() and fw.all())
        if finite:
            diff = np.abs(g - w)
            gf, wf = g, w
        else:
            nan += int(np.count_nonzero(np.isnan(g)))
            inf += int(np.count_nonzero(np.isinf(g)))
            bad_golden += int(np.count_nonzero(~fw))
            same = (g == w) | (np.isnan(g) & np.isnan(w))
            unexpected += int(np.count_nonzero(~fg & ~same))
            both = fg & fw
            with np.errstate(invalid="ignore"):
                diff = np.where(both, np.abs(g - w), np.where(same, 0.0, np.inf)).astype(work)
            gf, wf = g[both], w[both]
        aw = np.abs(w)
        top = float(diff.max()) if diff.size else 0.0
        finite = finite and top != np.inf  # (finite values can differ by more than the largest)
        if diff.size:
            max_abs = max(max_abs, top)
            if finite:  # (the usual chunk: every figure below without masks, the same values)
                rel = diff / np.maximum(aw, work(1e-6))
                bound = aw * rtol
                bound += atol
            else:
                finite_diff = np.isfinite(diff)
                rel = diff[finite_diff] / np.maximum(aw[finite_diff], work(1e-6))
                with np.errstate(invalid="ignore"):
                    bound = atol + rtol * np.where(fw, aw, 0)
            rel_sum += float(rel.sum(dtype=np.float64))
            rel_n += rel.size
            with np.errstate(invalid="ignore"):
                within = within and bool(np.all(diff <= bound))
        g64, w64 = gf.astype(np.float64), wf.astype(np.float64)  # once each: ~1 MB per 128 k
        dot += float(np.dot(g64, w64))
        ng += float(np.dot(g64, g64))
        nw += float(np.dot(w64, w64))
        del g64, w64
        if diff.size and n_worst and top > 0:
            worst += _chunk_worst(diff, finite, n_worst, lo, g, w)
    worst = sorted(worst, key=lambda t: -t[0])[:n_worst]
    cos = _cosine(dot, ng, nw)
    mean_rel = rel_sum / rel_n if rel_n else (0.0 if size == 0 else float("inf"))
    invalid = None
    if unexpected:
        found = " and ".join(f"{k} {w}" for k, w in ((nan, "NaN"), (inf, "Inf")) if k)
        invalid = f"{found} in the output where the golden is finite"
        cos = float("nan")
    verdict, reason = _verdict(invalid, cos, within, max_abs, atol, rtol)
    return OutputPrecision(
        name,
        dtype_name(dt),
        max_abs,
        mean_rel,
        cos,
        within,
        atol,
        rtol,
        nan,
        inf,
        verdict,
        [(i, gv, wv) for _, i, gv, wv in worst],
        reason,
        invalid,
    )


def _chunk_worst(diff, finite: bool, n_worst: int, lo: int, g, w) -> list[tuple[float, int, float, float]]:
    """The chunk's largest differences as (difference, flat index, got, golden); an infinite
    difference (a non-finite value against a finite one) ranks as the largest float."""
    k = min(n_worst, diff.size)
    key = diff.astype(np.float64)
    if not finite:
        key = np.nan_to_num(key, posinf=np.finfo(np.float64).max)
    idx = np.argpartition(-key, k - 1)[:k]
    return [(float(key[i]), lo + int(i), float(g[i]), float(w[i])) for i in idx if key[i] > 0]


def _cosine(dot: float, ng: float, nw: float) -> float:
    """Cosine similarity from the accumulated dot product and squared norms; two zero vectors
    agree (1.0), one zero vector against a non-zero one does not (0.0)."""
    if ng == 0.0 and nw == 0.0:
        return 1.0
    if ng == 0.0 or nw == 0.0:
        return 0.0
    return float(dot / (np.sqrt(ng) * np.sqrt(nw)))


def _verdict(invalid: str | None, cos: float, within: bool, max_abs: float, atol: float, rtol: float):
    """(verdict, reason) of one output: invalid values and a low cosine fail, a cosine short of
    PASS or an element beyond the tolerance warns."""
    if invalid:
        return "FAIL", invalid
    if cos < WARN_COSINE:
        return "FAIL", f"cosine {cos:.6f} < {WARN_COSINE}"
    if cos < PASS_COSINE:
        return "WARN", f"cosine {cos:.6f} < {PASS_COSINE}"
    if not within:
        return "WARN", f"max abs error {max_abs:.4g} beyond atol {atol:g} + rtol {rtol:g}·|golden|"
    return "PASS", f"cosine {cos:.6f}, every element within atol {atol:g} + rtol {rtol:g}"
