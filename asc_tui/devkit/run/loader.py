"""Import operator modules (found by `discovery`), check they follow the module format, resolve
cases/params."""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.util
import itertools
import linecache
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from ...ascendc.kernel import KernelFunction, Launch
from ...config import written_at
from ...cxx.files import CXX_SUFFIXES, kernel_for_spec, spec_for_kernel
from ...npu.errors import BuildError, TilingError, location_from_traceback
from ...operator import Case, Constraint, Param, Params, Tensors, TensorSpec
from .discovery import (  # noqa: F401 - re-exported: finding operators is discovery's job
    find_operators,
    list_operators,
    operator_dirs,
    resolve_operator,
)

_counter = itertools.count()
REQUIRED = ("CASES", "tensors", "tiling", "golden")


@dataclass(frozen=True)
class OperatorModule:
    """An imported operator file and the pieces of the module format it declares."""

    name: str
    path: str
    module: ModuleType
    kernel: KernelFunction
    cases: dict[str, Case]
    default_case: str
    params: dict[str, Param]
    source_hash: str
    doc: str
    sources: tuple[str, ...] = ()  # every file the operator is built from (C++: kernel + headers)
    cxx: Any = None  # a C++ operator's binding (asc_tui.cxx.operator.CxxBinding)

    @property
    def spec_path(self) -> str:
        """The file of CASES, PARAMS, CONSTRAINTS, tensors() and tiling(): the operator file, or
        a C++ operator's spec `.py` (its `path` is the kernel)."""
        return self.sources[-1] if self.cxx is not None and self.sources else self.path

    def case(self, name: str | None) -> Case:
        key = name or self.default_case
        if key not in self.cases:
            message = f"operator {self.name} has no case {key!r}; cases: {', '.join(self.cases)}"
            written = written_at(name)
            if written is not None:  # the project config's `case`: its line is the one to fix
                file, line, column = written
                raise BuildError(f"config case: {message}", file, line, column=column)
            raise BuildError(message, self.spec_path, line_of(self.spec_path, "CASES"))
        return self.cases[key]

    def resolve_params(self, overrides: dict[str, Any] | None = None) -> Params:
        values = {k: p.default for k, p in self.params.items()}
        for k, v in (overrides or {}).items():
            if k not in self.params:
                raise BuildError(
                    f"operator {self.name} has no parameter {k!r}; parameters: "
                    f"{', '.join(self.params) or 'none'}",
                    self.spec_path,
                    line_of(self.spec_path, "PARAMS"),
                )
            values[k] = _coerce(v, self.params[k].default)
        return Params(values)

    def tensors(self, case: Case) -> Tensors:
        specs = self._call("tensors", case)
        if not isinstance(specs, dict) or not all(isinstance(v, TensorSpec) for v in specs.values()):
            raise BuildError(
                "tensors(case) must return a dict of In(...)/Out(...) specs",
                self.spec_path,
                line_of(self.spec_path, "def tensors"),
            )
        return Tensors(specs)

    def constraint_violations(self, case: Case, params: Params) -> list[str]:
        out = []
        for c in getattr(self.module, "CONSTRAINTS", ()):
            if isinstance(c, Constraint):
                ok, reason = self._call_constraint(c.check, case, params), c.reason
            elif isinstance(c, str):
                env = {**dict(case), **dict(params)}
                try:
                    ok = bool(eval(c, {"__builtins__": {}}, env))  # noqa: S307 - operator's own text
                except Exception as exc:
                    raise BuildError(
                        f"constraint {c!r} failed to evaluate: {exc}",
                        self.spec_path,
                        line_of(self.spec_path, c),
                    ) from None
                reason = c
            else:
                ok, reason = self._call_constraint(c, case, params), getattr(c, "__name__", "")
            if isinstance(ok, str):
                out.append(ok)
            elif not ok:
                out.append(reason)
        return out

    def _call_constraint(self, fn, case, params):
        try:
            return fn(case, params)
        except Exception as exc:
            file, line = location_from_traceback(exc.__traceback__)
            raise BuildError(f"constraint raised {type(exc).__name__}: {exc}", file, line) from None

    def launch(self, case: Case, params: Params) -> Launch:
        result = self._call("tiling", case, params, error=TilingError)
        if isinstance(result, tuple) and len(result) == 2:
            result = Launch(*result)
        if not isinstance(result, Launch):
            raise TilingError(
                "tiling(case, params) must return Launch(block_dim, tiling)",
                self.spec_path,
                line_of(self.spec_path, "def tiling"),
            )
        from ...cxx.host.acl import MAX_BLOCKS

        bd = result.block_dim
        if not isinstance(bd, int) or isinstance(bd, bool) or not 1 <= bd <= MAX_BLOCKS:
            file, line = result.where
            if file is None or Path(file).resolve() != Path(self.spec_path).resolve():
                file, line = self.spec_path, self._return_line("tiling")
            raise TilingError(
                f"tiling returned block_dim={bd!r}; it must be a whole number from 1 to {MAX_BLOCKS}",
                file,
                line,
            )
        return result

    def _return_line(self, fname: str) -> int | None:
        """The last `return` of the spec's function `fname` (else its `def`)."""
        import inspect

        fn = getattr(self.module, fname, None)
        fn = getattr(fn, "__wrapped__", fn)
        try:
            lines, start = inspect.getsourcelines(fn)
        except (OSError, TypeError):
            return line_of(self.spec_path, f"def {fname}")
        returns = [start + i for i, t in enumerate(lines) if t.strip().startswith("return")]
        return returns[-1] if returns else start

    def flops(self, case: Case) -> float:
        fn = getattr(self.module, "flops", None)
        return float(self._call("flops", case)) if fn else 0.0

    def _call(self, fname: str, *args, error=BuildError):
        fn = getattr(self.module, fname)
        try:
            return fn(*args)
        except (BuildError, TilingError):
            raise
        except Exception as exc:
            file, line = location_from_traceback(exc.__traceback__)
            raise error(f"{fname}() raised {type(exc).__name__}: {exc}", file, line) from None


def _coerce(value: Any, like: Any) -> Any:
    if isinstance(value, str) and not isinstance(like, str):
        for conv in (int, float):
            try:
                return conv(value)
            except ValueError:
                pass
        if value.lower() in ("true", "false"):
            return value.lower() == "true"
    return value


def line_of(path: str, needle: str) -> int | None:
    """The first line of the file holding `needle` (where an error about that declaration points)."""
    try:
        for i, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
            if needle in line:
                return i
    except OSError:
        pass
    return None


def load_operator(ref: str | Path, root: str | Path | None = None) -> OperatorModule:
    """Import an operator file afresh (no caching: a saved file is always re-read)."""
    path = resolve_operator(str(ref), root)
    if path.is_dir():
        _not_a_sample(path)
    if path.suffix in CXX_SUFFIXES or (path.suffix == ".py" and kernel_for_spec(path) is not None):
        return _load_cxx_operator(path)
    source = path.read_bytes()
    module = _import(path, source)
    return _validate(module, path, source)


def _not_a_sample(d: Path):
    """A directory that is no sample: its C++ errors if it has any (a sample whose main() a
    syntax error swallowed), else what a sample needs."""
    srcs = [p for p in sorted(d.iterdir()) if p.suffix in CXX_SUFFIXES and p.is_file()]
    from ...cxx.check import check_unit

    for p in srcs:  # a truncated file, a lost brace: clang says where
        check_unit(str(p))
    kern = [p for p in srcs if "__global__" in p.read_text(encoding="utf-8", errors="replace")]
    if kern:
        raise BuildError(
            f"no host main() in {', '.join(p.name for p in srcs)}: a sample directory needs "
            "`int main()` in its kernel file or a main.cpp",
            str(kern[0]),
            None,
        )
    raise BuildError(
        f"{d} is a directory without a sample (no C++ file with a __global__ kernel)", str(d), None
    )


def _load_cxx_operator(path: Path) -> OperatorModule:
    """A C++ operator: import its spec, bind PARAMS to the kernel's constants, translate."""
    from ...cxx.operator import bind_operator

    kernel_path = path if path.suffix in CXX_SUFFIXES else kernel_for_spec(path)
    spec = spec_for_kernel(kernel_path)
    if not spec.is_file():
        raise BuildError(
            f"C++ kernel {kernel_path.name} has no spec {spec.name} beside it",
            str(kernel_path),
            1,
            hint="write the operator's CASES, tensors(), tiling() and golden() in " + spec.name,
        )
    source = spec.read_bytes()
    module = _import(spec, source)
    params = {
        k: (p if isinstance(p, Param) else Param(p)) for k, p in dict(getattr(module, "PARAMS", {})).items()
    }
    binding = bind_operator(kernel_path, module, params)
    module.PARAMS = params
    digest = hashlib.sha256(source)
    for f in binding.sources:
        digest.update(Path(f).read_bytes())
    op = _validate(module, spec, source, kernel=binding.kernel)
    return dataclasses.replace(
        op,
        path=str(kernel_path),
        source_hash=digest.hexdigest()[:16],
        sources=(*binding.sources, str(spec)),
        cxx=binding,
    )


def _import(path: Path, source: bytes) -> ModuleType:
    try:
        code = compile(source, str(path), "exec")
    except SyntaxError as exc:
        col = f" (column {exc.offset})" if exc.offset else ""
        raise BuildError(
            f"syntax error: {exc.msg}{col}", str(path), exc.lineno, hint=syntax_hint(exc)
        ) from None
    _remember_source(str(path), source)
    mod_name = f"asc_tui_op_{path.stem}_{next(_counter)}"
    spec = importlib.util.spec_from_file_location(mod_name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[mod_name] = module
    try:
        exec(code, module.__dict__)
    except BuildError:
        raise
    except Exception as exc:
        file, line = location_from_traceback(exc.__traceback__)
        raise BuildError(f"importing the operator raised {type(exc).__name__}: {exc}", file, line) from None
    finally:
        sys.modules.pop(mod_name, None)
    return module


_SYNTAX_HINTS = (
    ("was never closed", "a bracket opened on this line has no closing one"),
    ("unexpected EOF", "the file ends inside a bracket or a block: look for a missing ) ] }"),
    ("unterminated string", "a string opened on this line is never closed: add the matching quote"),
    ("unterminated triple-quoted", 'a docstring is never closed: add the closing """'),
    ("expected ':'", "a def / class / if / for / while / with line must end with ':'"),
    ("indent", "indent with 4 spaces, no tabs, and line the block up with its neighbours"),
    ("does not match opening", "the closing bracket does not match the one it closes"),
    ("unmatched", "a closing bracket has no opening one: remove it or add its partner"),
    ("Perhaps you forgot a comma", "separate the items with commas"),
    ("cannot assign", "the left of '=' must be a name, an attribute or an index ('==' compares)"),
)


def syntax_hint(exc: SyntaxError) -> str:
    """Advice for a syntax error (the snippet already shows the line, so never repeat it)."""
    msg = exc.msg or ""
    for needle, hint in _SYNTAX_HINTS:
        if needle in msg:
            return hint
    where = f"near column {exc.offset} " if exc.offset else ""
    return f"Python cannot parse this line {where}— the mistake may also be at the end of the line above"


def _remember_source(path: str, source: bytes) -> None:
    """Put the source just compiled in `linecache`, so hot lines, traces and tracebacks quote
    the code that ran even if the file is edited since. Entries without an mtime are never
    re-checked against the file (`linecache.checkcache` skips them), so quoting costs no stat."""
    text = importlib.util.decode_source(source)
    linecache.cache[path] = (len(text), None, text.splitlines(True), path)


def _validate(module: ModuleType, path: Path, source: bytes, kernel=None) -> OperatorModule:
    missing = [n for n in REQUIRED if not hasattr(module, n)]
    kernels = [v for v in vars(module).values() if isinstance(v, KernelFunction)]
    if kernel is None:
        kernel = getattr(module, "KERNEL", None) or (kernels[0] if len(kernels) == 1 else None)
    if kernel is None:
        missing.append(
            "a kernel (@AscendC.kernel)"
            if not kernels
            else "KERNEL = <one of the kernels> (the file defines several)"
        )
    if missing:
        raise BuildError(
            f"not an operator module: missing {', '.join(missing)}",
            str(path),
            1,
            hint="see README 'Writing an operator' for the module format",
        )
    raw_cases = module.CASES
    if not isinstance(raw_cases, dict) or not raw_cases:
        raise BuildError(
            "CASES must be a non-empty dict of name -> dict of values",
            str(path),
            line_of(str(path), "CASES"),
        )
    cases = {name: Case(name, vals) for name, vals in raw_cases.items()}
    default = getattr(module, "DEFAULT_CASE", next(iter(cases)))
    params = dict(getattr(module, "PARAMS", {}))
    for k, p in params.items():
        if not isinstance(p, Param):
            params[k] = Param(p)
    return OperatorModule(
        name=path.stem,
        path=str(path),
        module=module,
        kernel=kernel,
        cases=cases,
        default_case=default,
        params=params,
        source_hash=hashlib.sha256(source).hexdigest()[:16],
        doc=(module.__doc__ or "").strip().splitlines()[0] if module.__doc__ else "",
    )
