"""Errors of the C++ front end: build errors that name file:line:col and draw a caret.

They subclass the devkit's `BuildError`, so the CLI (`--json`) and the workbench's log show them
like any other operator error; the snippet carries the source line and a caret under the column.
"""

from __future__ import annotations

import linecache
from pathlib import Path

from ..npu.errors import BuildError, ErrorInfo


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
        self.column = column
        where = f" at {Path(file).name}:{line}:{column}" if file and line and column else ""
        super().__init__(message + where, file, line, hint)
        self.bare_message = message

    def source(self) -> str | None:
        if not self.file or not self.line:
            return None
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
        return ErrorInfo(self.kind, self.message, self.file, self.line, self.hint, snippet)


class Unsupported(CxxError):
    """A construct outside the translated subset ("not supported yet: ...")."""

    def __init__(self, what: str, file=None, line=None, column=None, hint=None):
        super().__init__(f"not supported yet: {what}", file, line, column, hint)
