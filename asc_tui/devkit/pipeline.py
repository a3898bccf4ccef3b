"""The run the front ends get: the run pipeline (`run.runner`) and, when the outputs hold NaN/Inf
the golden does not, where the first one came from (`debug.nonfinite`).

An output full of NaN says that something went wrong, not where; every `asc-tui run`, watch and
workbench run answers both. Only a run that failed that way pays for the second, traced run, and
that one gets what is left of the run's time limit.
"""

from __future__ import annotations

import time
from dataclasses import replace

from .debug.nonfinite import locate
from .run.runner import RunReport, RunRequest, run

#: A traced run is not started with less time left than this (seconds): it would only time out.
MIN_TRACE_S = 1.0


def run_located(request: RunRequest) -> RunReport:
    """`run(request)`, with `nonfinite` set when the kernel made NaN/Inf (None if not found)."""
    t0 = time.perf_counter()
    report = run(request)
    if report.precision is None or not report.precision.made_nonfinite:
        return report
    left = None if request.timeout_s is None else request.timeout_s - (time.perf_counter() - t0)
    if left is not None and left < MIN_TRACE_S:
        return report
    return replace(report, nonfinite=locate(replace(request, timeout_s=left)))
