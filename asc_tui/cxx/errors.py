"""Errors of the C++ front end: build errors that name file:line:col and draw a caret.

They subclass the devkit's `BuildError`, so the CLI (`--json`) and the workbench's log show them
like any other operator error; the snippet carries the source line and a caret under the column.
"""

from __future__ import annotations

import linecache
import re
from pathlib import Path

from ..npu.errors import BuildError, ErrorInfo, report_hint


class CxxError(BuildError):
    """A C++ source the front end cannot translate: syntax, unknown name, unsupported construct."""

    def __init__(
        self,
        message: str,
        file: str | None = None,
        line: int | None = None,
        column: int | None = None,
        hint: str | None = None,
    ):
        where = f" at {Path(file).name}:{line}:{column}" if file and line and column else ""
        super().__init__(message + where, file, line, hint, column)
        self.bare_message = message

    def source(self) -> str | None:
        if not self.file or not self.line:
            return None
        linecache.checkcache(self.file)  # a warm worker read the file before the user saved it
        text = linecache.getline(self.file, self.line)
        if not text:
            try:
                text = (
                    Path(self.file).read_text(encoding="utf-8", errors="replace").splitlines()[self.line - 1]
                )
            except (OSError, IndexError):
                return None
        return text.rstrip("\n").expandtabs(1)

    def caret(self) -> str:
        """The offending line and a `^` under the column (1-based)."""
        src = self.source() or ""
        return f"{src}\n{' ' * max((self.column or 1) - 1, 0)}^"

    def info(self) -> ErrorInfo:
        src = self.source()
        snippet = None
        if src is not None:
            pad = " " * (4 + len(str(self.line)))
            snippet = f"{src}\n{pad} | {' ' * max((self.column or 1) - 1, 0)}^"
        return ErrorInfo(self.kind, self.message, self.file, self.line, self.hint, snippet, self.column)


class Unsupported(CxxError):
    """A construct outside the translated subset ("not supported yet: ...")."""

    def __init__(self, what: str, file=None, line=None, column=None, hint=None):
        super().__init__(f"not supported yet: {what}", file, line, column, hint)


#: Python type names as the C++ source spells them (the translated code runs on these).
_CXX_TYPES = {
    "int": "int",
    "float": "float",
    "bool": "bool",
    "NoneType": "nullptr_t",
    "str": "const char *",
    "list": "array",
    "tuple": "initializer list",
    "SimpleNamespace": "struct",
    "float16": "half",
    "float32": "float",
    "float64": "double",
    "bfloat16": "bfloat16_t",
    "int8": "int8_t",
    "int16": "int16_t",
    "int32": "int32_t",
    "int64": "int64_t",
    "uint8": "uint8_t",
    "uint16": "uint16_t",
    "uint32": "uint32_t",
    "uint64": "uint64_t",
    "BlockIndex": "int64_t",
}
_DTYPE_CLASS = re.compile(r"(?:numpy\.dtypes\.)?(\w+)DType$")
_BINARY = re.compile(r"unsupported operand type\(s\) for (\S+?)=?: '([^']+)' and '([^']+)'")
_COMPARE = re.compile(r"'(\S+)' not supported between instances of '([^']+)' and '([^']+)'")
_UNARY = re.compile(r"bad operand type for unary (\S+): '([^']+)'")
_CALL = re.compile(r"'([^']+)' object is not callable")
_SUBSCRIPT = re.compile(r"'([^']+)' object is not subscriptable")
_MEMBER = re.compile(r"'([^']+)' object has no attribute '(\w+)'")


def cxx_type(py_name: str) -> str:
    """A Python type name of a translated value, as C++ names it ('half' for a dtype: a type
    used where a value belongs)."""
    m = _DTYPE_CLASS.match(py_name)
    if m:
        name = m.group(1).lower()
        return f"type {_CXX_TYPES.get(name, name)}"
    return _CXX_TYPES.get(py_name.rsplit(".", 1)[-1], py_name.rsplit(".", 1)[-1])


def in_cxx_words(exc: BaseException) -> str | None:
    """What a compiler would say about the C++ whose translation raised `exc`, or None when the
    exception says nothing the C++ author can act on."""
    text = str(exc)
    if isinstance(exc, ZeroDivisionError):
        return "division by zero (undefined behaviour; the device traps)"
    if isinstance(exc, TypeError):
        m = _BINARY.search(text) or _COMPARE.search(text)
        if m:
            op, a, b = m.groups()
            return f"invalid operands to binary expression ('{cxx_type(a)}' {op} '{cxx_type(b)}')"
        m = _UNARY.search(text)
        if m:
            return f"invalid argument type '{cxx_type(m.group(2))}' to unary expression {m.group(1)}"
        m = _CALL.search(text)
        if m:
            return f"called object type '{cxx_type(m.group(1))}' is not a function"
        m = _SUBSCRIPT.search(text)
        if m:
            return f"subscripted value of type '{cxx_type(m.group(1))}' is not an array or pointer"
    if isinstance(exc, AttributeError):
        m = _MEMBER.search(text)
        if m:
            return f"no member named '{m.group(2)}' in '{cxx_type(m.group(1))}'"
    if isinstance(exc, IndexError):
        return "array index out of bounds"
    return None


def host_failure(exc: Exception, file, line, column) -> CxxError:
    """A host statement whose interpretation raised: the compiler's words when the exception has
    some, else "not supported yet" with the Python detail in the hint (never the message)."""
    words = in_cxx_words(exc)
    if words is not None:
        return CxxError(words, file, line, column)
    return Unsupported("host code this statement needs", file, line, column, hint=report_hint(exc))
