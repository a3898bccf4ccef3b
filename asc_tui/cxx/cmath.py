"""<cmath> scalar functions with C++ types: `sqrtf` is fp32, `sqrt`/`std::sqrt` follow the argument.

The `f`-suffixed C names take and return `float`; the plain names are the C++ overloads: a
`float` argument gives a `float` result (`std::sqrt(float)`), `double` or an integer gives
`double`; `abs` of an integer stays an integer. Each result is computed in double by the C
library (`math`) and rounded to fp32 where the C++ type is `float`.
"""

from __future__ import annotations

from . import ctype as T
from .kernel.scope import Val

# name -> number of arguments
_FUNCS = {
    "sqrt": 1, "exp": 1, "exp2": 1, "expm1": 1, "log": 1, "log2": 1, "log10": 1, "log1p": 1,
    "fabs": 1, "floor": 1, "ceil": 1, "trunc": 1, "round": 1, "sin": 1, "cos": 1, "tan": 1,
    "tanh": 1, "atan": 1, "erf": 1, "cbrt": 1, "pow": 2, "fmin": 2, "fmax": 2, "fmod": 2,
    "atan2": 2, "hypot": 2,
}  # fmt: skip


def cmath_name(name: str) -> str | None:
    """The base <cmath> name of `name` (`sqrtf` → `sqrt`), or None when it is not one."""
    if name == "abs" or name in _FUNCS:
        return name
    if name.endswith("f") and name[:-1] in _FUNCS:
        return name[:-1]
    return None


def cmath_call(gen, name: str, args, ctx, node) -> Val:
    base = cmath_name(name)
    vals = [gen.expr(a, ctx) for a in args]
    want = 1 if base == "abs" else _FUNCS[base]
    if len(vals) != want:
        raise gen.err(ctx.pf, node, f"{name} takes {want} argument{'s' if want > 1 else ''}")
    if base == "abs" and vals[0].type.is_int:
        t = T.promote(vals[0].type)
        code = gen.convert(vals[0], t, ctx, node)
        return gen.maybe_fold(f"abs({code})", t, *vals)
    if base == "abs":
        base = "fabs"
    if name != base and name != "abs":  # sqrtf, powf...: float in, float out
        t = T.FLOAT
    elif all(v.type.is_float and v.type.name != "double" for v in vals):
        t = T.FLOAT
    else:
        t = T.DOUBLE
    for v in vals:
        if not v.type.is_arith and v.type.kind != "opaque":
            raise gen.err(ctx.pf, node, f"{name} of {v.type}")
    codes = [gen.convert(v, t, ctx, node) for v in vals]
    code = f"_cx.cm({base!r}, {', '.join(codes)})"
    if t is T.FLOAT:
        code = f"_cx.f32({code})"
    return gen.maybe_fold(code, t, *vals)
