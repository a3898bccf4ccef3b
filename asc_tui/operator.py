"""Host-side declarations of an operator module: cases, tunable parameters, tensors.

An operator file imports these next to the kernel API; see README "Writing an operator".
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .ascendc.dtypes import as_dtype, dtype_name, load_if_named
from .ascendc.kernel import Launch

__all__ = ["Param", "In", "Out", "Case", "Params", "Launch", "Constraint"]


@dataclass(frozen=True)
class Param:
    """A tunable parameter: `default` is the current choice, `values` the search space."""

    default: Any
    values: Sequence[Any] = ()
    doc: str = ""

    def space(self) -> tuple:
        return tuple(self.values) if self.values else (self.default,)


@dataclass(frozen=True)
class Constraint:
    """A restriction on parameters: `check(case, params)` true when valid; `reason` when not."""

    check: Callable[[Any, Any], bool]
    reason: str


@dataclass(frozen=True)
class TensorSpec:
    shape: tuple[int, ...]
    dtype: Any
    init: Any = "normal"
    is_output: bool = False
    #: (file, line) of the In(...)/Out(...) that declared it, for errors about this tensor.
    where: tuple = field(default=(None, None), compare=False, repr=False)

    @property
    def np_dtype(self) -> np.dtype:
        return as_dtype(self.dtype)

    @property
    def count(self) -> int:
        return int(np.prod(self.shape)) if self.shape else 1

    @property
    def nbytes(self) -> int:
        return self.count * self.np_dtype.itemsize

    def describe(self) -> str:
        return f"{dtype_name(self.np_dtype)}[{'x'.join(map(str, self.shape))}]"

    def generate(self, rng: np.random.Generator) -> np.ndarray:
        """Seeded input data: "normal", "uniform", (lo, hi), "zeros", "ones" or a callable."""
        dt = self.np_dtype
        init = self.init
        if callable(init):
            return np.asarray(init(rng, self.shape), dtype=dt).reshape(self.shape)
        if isinstance(init, tuple):
            lo, hi = init
            if dt.kind in "iu":
                return rng.integers(lo, hi, self.shape, endpoint=False).astype(dt)
            return rng.uniform(lo, hi, self.shape).astype(dt)
        if init == "zeros":
            return np.zeros(self.shape, dt)
        if init == "ones":
            return np.ones(self.shape, dt)
        if dt.kind in "iu":
            info = np.iinfo(dt)
            return rng.integers(max(info.min, -100), min(info.max, 100), self.shape).astype(dt)
        if init == "uniform":
            return rng.uniform(-1, 1, self.shape).astype(dt)
        return rng.standard_normal(self.shape, dtype=np.float32).astype(dt)


def In(shape, dtype, init: Any = "normal") -> TensorSpec:  # noqa: N802 - reads as a declaration
    """An input tensor in GM, generated from a seeded RNG."""
    return TensorSpec(tuple(int(s) for s in np.atleast_1d(shape)), dtype, init, False, _caller())


def Out(shape, dtype) -> TensorSpec:  # noqa: N802
    """An output tensor in GM, compared with the golden reference."""
    return TensorSpec(tuple(int(s) for s in np.atleast_1d(shape)), dtype, "zeros", True, _caller())


def _caller() -> tuple[str, int]:
    f = sys._getframe(2)
    return f.f_code.co_filename, f.f_lineno


class _Attrs(Mapping):
    """A read-only mapping that also allows attribute access (`case.n`, `params.tile_length`)."""

    def __init__(self, values: Mapping[str, Any]):
        object.__setattr__(self, "_values", dict(values))

    def __getattr__(self, key: str):
        try:
            value = self._values[key]
        except KeyError:
            raise AttributeError(key) from None
        load_if_named(value)  # dtype="bfloat16": numpy knows the name only with ml_dtypes
        return value

    def __setattr__(self, key, value):
        raise AttributeError("read-only")

    def __getitem__(self, key: str):
        value = self._values[key]
        load_if_named(value)
        return value

    def __iter__(self):
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return ", ".join(f"{k}={v!r}" for k, v in self._values.items())


class Case(_Attrs):
    """One named problem instance: shapes, dtype and anything the tiling needs."""

    def __init__(self, name: str, values: Mapping[str, Any]):
        super().__init__(values)
        object.__setattr__(self, "name", name)


class Params(_Attrs):
    """The tunable parameter values of one run."""


@dataclass(frozen=True)
class Tensors:
    specs: dict[str, TensorSpec] = field(default_factory=dict)

    @property
    def inputs(self) -> dict[str, TensorSpec]:
        return {k: v for k, v in self.specs.items() if not v.is_output}

    @property
    def outputs(self) -> dict[str, TensorSpec]:
        return {k: v for k, v in self.specs.items() if v.is_output}
