"""Compare a kernel's outputs with the golden reference: the figures operator authors quote.

Verdict: PASS when cosine ≥ 0.999 and every element is within atol + rtol·|want| for its dtype;
WARN when cosine is in [0.99, 0.999) (or cosine passes but the element bound does not);
FAIL below 0.99, or on any NaN/Inf the golden does not have.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np

from ..ascendc.dtypes import as_dtype, dtype_name

#: (atol, rtol) per output dtype; operators override with PRECISION = {"float16": (atol, rtol)}.
DEFAULT_THRESHOLDS = {
    "float16": (1e-3, 1e-3),
    "bfloat16": (8e-3, 8e-3),
    "float32": (1e-5, 1e-5),
}
PASS_COSINE, WARN_COSINE = 0.999, 0.99


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


@dataclass(frozen=True)
class PrecisionReport:
    outputs: tuple[OutputPrecision, ...]

    @property
    def verdict(self) -> str:
        order = {"PASS": 0, "WARN": 1, "FAIL": 2}
        return max((o.verdict for o in self.outputs), key=order.get, default="PASS")

    def _worst(self, key: str, lo: bool = False) -> float:
        vals = [getattr(o, key) for o in self.outputs]
        if not vals:
            return 0.0 if not lo else 1.0
        return min(vals) if lo else max(vals)

    def to_dict(self) -> dict:
        return {
            "max_abs_error": self._worst("max_abs_error"),
            "mean_rel_error": self._worst("mean_rel_error"),
            "cosine_similarity": self._worst("cosine_similarity", lo=True),
            "verdict": self.verdict,
            "outputs": [asdict(o) for o in self.outputs],
        }


def thresholds_for(dtype, overrides: dict | None = None) -> tuple[float, float]:
    name = dtype_name(as_dtype(dtype))
    if overrides and name in overrides:
        return tuple(overrides[name])
    if name in DEFAULT_THRESHOLDS:
        return DEFAULT_THRESHOLDS[name]
    return (0.0, 0.0)  # integers: exact


def compare(name: str, got: np.ndarray, want: np.ndarray, overrides: dict | None = None,
            n_worst: int = 5) -> OutputPrecision:
    dt = as_dtype(got.dtype)
    atol, rtol = thresholds_for(dt, overrides)
    g = np.asarray(got, dtype=np.float64).ravel()
    w = np.asarray(want, dtype=np.float64).ravel()
    nan = int(np.count_nonzero(np.isnan(g)))
    inf = int(np.count_nonzero(np.isinf(g)))
    bad_golden = int(np.count_nonzero(~np.isfinite(w)))
    finite = np.isfinite(g) & np.isfinite(w)
    diff = np.where(finite, np.abs(g - w), np.inf)
    diff = np.where(np.isnan(g) & np.isnan(w), 0.0, diff)
    diff = np.where(np.isinf(g) & (g == w), 0.0, diff)
    max_abs = float(diff.max()) if diff.size else 0.0
    denom = np.maximum(np.abs(w), 1e-6)
    rel = np.where(np.isfinite(diff), diff / denom, np.inf)
    mean_rel = float(rel[np.isfinite(rel)].mean()) if np.isfinite(rel).any() else float("inf")
    gf, wf = g[finite], w[finite]
    ng, nw = float(np.linalg.norm(gf)), float(np.linalg.norm(wf))
    if ng == 0.0 and nw == 0.0:
        cos = 1.0
    elif ng == 0.0 or nw == 0.0:
        cos = 0.0
    else:
        cos = float(np.dot(gf, wf) / (ng * nw))
    within = bool(np.all(diff <= atol + rtol * np.abs(np.where(np.isfinite(w), w, 0.0))))
    if (nan + inf) > bad_golden or cos < WARN_COSINE:
        verdict = "FAIL"
    elif cos < PASS_COSINE or not within:
        verdict = "WARN"
    else:
        verdict = "PASS"
    worst = []
    if diff.size and max_abs > 0:
        k = min(n_worst, diff.size)
        idx = np.argpartition(-np.nan_to_num(diff, posinf=np.finfo(float).max), k - 1)[:k]
        idx = idx[np.argsort(-np.nan_to_num(diff[idx], posinf=np.finfo(float).max))]
        worst = [(int(i), float(g[i]), float(w[i])) for i in idx if diff[i] > 0]
    return OutputPrecision(name, dtype_name(dt), max_abs, mean_rel, cos, within, atol, rtol, nan,
                           inf, verdict, worst)
