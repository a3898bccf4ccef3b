"""The planning step of a tune, run where the user's code may run: import the operator, build
and prune the space, rank it with the analytical model.

Planning executes operator code (its import, CONSTRAINTS, tiling, the dry runs of kernel
set-up), so with worker processes it runs in a child process too: an `os._exit`, a crash or an
endless loop there fails the tune with a message instead of taking the caller (the workbench)
down. The plan that comes back is plain data.
"""

from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass

from ...npu.chip import load_chip
from ...npu.errors import BuildError, ErrorInfo, OperatorError
from ..run.loader import load_operator
from .apply import choice_free_hash
from .model import estimate_kernel_us, roofline_inputs
from .space import SearchSpace, build_space


@dataclass(frozen=True)
class Plan:
    operator: str
    path: str
    source_hash: str  # the file's hash (workers check they evaluate this version)
    cache_hash: str  # the hash the cache is keyed by (ignores the current-choice literals)
    case: str
    space: SearchSpace
    prior: dict  # config key -> analytical kernel estimate (µs)
    current: dict  # the operator's current choice (PARAMS defaults)
    seconds: float  # time spent planning (s)


def make_plan(
    op_ref: str, case: str | None, chip: str | None, fixed: dict, probe_timeout_s: float | None = None
) -> Plan | ErrorInfo:
    """Plan in this process; the user's mistakes come back as an ErrorInfo (picklable)."""
    import time

    t0 = time.perf_counter()
    try:
        chip_model = load_chip(chip)
        op = load_operator(op_ref)
        case_obj = op.case(case)
        space = build_space(op, case_obj.name, chip_model, fixed, probe_timeout_s)
        base = roofline_inputs(op, case_obj.name, chip_model)
        prior = {c.key: estimate_kernel_us(op, case_obj.name, chip_model, c, base) for c in space.valid}
    except OperatorError as exc:
        return exc.info()
    return Plan(
        op.name,
        op.path,
        op.source_hash,
        choice_free_hash(op.path, op.source_hash),
        case_obj.name,
        space,
        prior,
        {k: p.default for k, p in op.params.items()},
        time.perf_counter() - t0,
    )


def plan(
    op_ref: str,
    case: str | None,
    chip: str | None,
    fixed: dict,
    isolated: bool,
    timeout_s: float | None = 60.0,
) -> Plan:
    """Make the plan (in a child process when `isolated`); raise OperatorError on mistakes."""
    if not isolated:
        result = make_plan(op_ref, case, chip, fixed, timeout_s)
    else:
        from .evaluate import mp_context

        pool = ProcessPoolExecutor(1, mp_context=mp_context())
        try:
            fut = pool.submit(make_plan, op_ref, case, chip, fixed, timeout_s)
            result = fut.result(timeout=None if timeout_s is None else max(timeout_s, 1) * 4)
        except BrokenProcessPool:
            raise BuildError(
                f"the operator {op_ref} killed the process while the tuner "
                "pruned its space (import, CONSTRAINTS, tiling or kernel set-up)",
                hint="run `asc-tui run` on it to see where",
            ) from None
        except FutureTimeout:
            raise BuildError(
                f"pruning the space of {op_ref} did not finish in time (an "
                "endless loop in import, CONSTRAINTS, tiling or kernel set-up?)"
            ) from None
        finally:
            for proc in list((getattr(pool, "_processes", None) or {}).values()):
                if proc.is_alive():
                    proc.terminate()
            pool.shutdown(wait=True, cancel_futures=True)
    if isinstance(result, ErrorInfo):
        raise _error_from(result)
    return result


def _error_from(info: ErrorInfo) -> OperatorError:
    """Rebuild the OperatorError subclass an ErrorInfo came from (by its kind)."""
    stack, cls = [OperatorError], OperatorError
    while stack:
        c = stack.pop()
        if getattr(c, "kind", None) == info.kind:
            cls = c
            break
        stack.extend(c.__subclasses__())
    err = cls(info.message, info.file, info.line, info.hint, column=info.column)
    return err
