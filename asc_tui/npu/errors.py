"""Errors as values the UI can show: every one can name the user's file and line."""

from __future__ import annotations

import re
import sys
import traceback
from dataclasses import asdict, dataclass
from pathlib import Path

from .. import PACKAGE_DIR

_PKG = str(PACKAGE_DIR)
_SHIPPED = str(PACKAGE_DIR.parent / "asc_tui_bundled")


@dataclass(frozen=True)
class ErrorInfo:
    """A serialisable error record (what `--json` prints under `errors`)."""

    kind: str
    message: str
    file: str | None = None
    line: int | None = None
    hint: str | None = None
    snippet: str | None = None
    column: int | None = None  # 1-based; None when only the line is known

    def to_dict(self) -> dict:
        return asdict(self)

    def location(self) -> str:
        if self.file is None:
            return ""
        if not self.line:
            return self.file
        return f"{self.file}:{self.line}:{self.column}" if self.column else f"{self.file}:{self.line}"

    def format(self) -> str:
        loc = self.location()
        text = f"{loc}: {self.message}" if loc else self.message
        if self.snippet:
            text += f"\n    {self.line} | {self.snippet}"
        if self.hint:
            text += f"\n    hint: {self.hint}"
        return text


class OperatorError(Exception):
    """Base of every error that points at an operator author's code."""

    kind = "operator"

    def __init__(
        self,
        message: str,
        file: str | None = None,
        line: int | None = None,
        hint: str | None = None,
        column: int | None = None,
    ):
        super().__init__(message)
        self.message = message
        self.file = file
        self.line = line
        self.hint = hint
        self.column = column

    def info(self) -> ErrorInfo:
        return ErrorInfo(
            self.kind,
            self.message,
            self.file,
            self.line,
            self.hint,
            source_line(self.file, self.line),
            self.column,
        )

    def __str__(self) -> str:
        return self.info().format()


class BuildError(OperatorError):
    """The operator module could not be imported or does not follow the module format."""

    kind = "build"


class TilingError(OperatorError):
    """The host tiling refused the case/parameters or produced an invalid launch."""

    kind = "tiling"


class KernelError(OperatorError):
    """A guard rail tripped while the kernel ran (capacity, bounds, queue misuse...)."""

    kind = "kernel"


class KernelException(OperatorError):
    """The kernel's own Python code raised."""

    kind = "exception"


class KernelAssert(OperatorError):
    """`ascendc_assert` failed: a trap, as on hardware."""

    kind = "assert"


class SyncError(OperatorError):
    """Events misused: IDs exhausted, a WaitFlag nobody sets (the pipe would hang)."""

    kind = "sync"


class ChipError(OperatorError):
    """A chip model file is missing, malformed or incomplete."""

    kind = "chip"


class InternalError(OperatorError):
    """asc-tui's own code failed (a bug to report): shown at the user's nearest line, with the
    Python detail in the hint only, never as the message."""

    kind = "internal"


def internal_frame(tb) -> traceback.FrameSummary | None:
    """The frame that raised, when it is asc-tui's own code: the innermost frame that is not a
    library's (numpy raising for asc-tui's call is asc-tui's failure), if it is in asc_tui."""
    frames = [f for f in traceback.extract_tb(tb) if not is_library_file(f.filename)]
    if frames and frames[-1].filename.startswith(_PKG):
        return frames[-1]
    return None


def internal_error(
    exc: BaseException, file: str | None = None, line: int | None = None, doing: str = ""
) -> InternalError | None:
    """An exception raised inside asc-tui, as the error the user sees: "internal error in
    asc-tui" at the innermost user frame of its traceback (else `file`:`line`); None when the
    exception was raised by the user's own code."""
    inner = internal_frame(exc.__traceback__)
    if inner is None:
        return None
    users = [
        f
        for f in traceback.extract_tb(exc.__traceback__)
        if is_user_file(f.filename) and not is_library_file(f.filename)
    ]
    if users:
        file, line = users[-1].filename, users[-1].lineno
    return InternalError(
        "internal error in asc-tui" + (f" {doing}" if doing else "") + (" at this line" if line else ""),
        file,
        line,
        hint=report_hint(exc),
    )


def report_hint(exc: BaseException) -> str:
    """The Python detail of a failure inside asc-tui, for a bug report (a hint, not the message)."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if not is_library_file(f.filename)]
    at = ""
    if frames:
        where = Path(frames[-1].filename).resolve()
        try:
            rel = where.relative_to(PACKAGE_DIR.parent)
        except ValueError:
            rel = where.name
        at = f" at {rel}:{frames[-1].lineno}"
    detail = str(exc).splitlines()[0][:200] if str(exc) else ""
    return f"please report it: {type(exc).__name__}{at}" + (f" ({detail})" if detail else "")


def is_user_file(filename: str) -> bool:
    return not filename.startswith(_PKG) and not filename.startswith("<")


def user_frame(depth: int = 2):
    """The innermost frame outside asc_tui: the user's line that asked for the operation."""
    f = sys._getframe(depth)
    while f is not None and f.f_code.co_filename.startswith(_PKG):
        f = f.f_back
    return f


def user_line_of(fr) -> tuple[str, int]:
    """File and line for an error raised at frame `fr`: `fr` itself when it is the user's, else
    the innermost user frame that led to it (a twin call made inside asc-tui, e.g. by the
    high-level Matmul, is the user's call of that object)."""
    f = fr
    while f is not None and not is_user_file(f.f_code.co_filename):
        f = f.f_back
    f = f or fr
    return f.f_code.co_filename, f.f_lineno


def user_location(depth: int = 3) -> tuple[str | None, int | None]:
    f = user_frame(depth)
    if f is None:
        return None, None
    return f.f_code.co_filename, f.f_lineno


_LIBRARY = re.compile(r"[/\\](site-packages|dist-packages|lib[/\\]python\d[\d.]*)[/\\]")


def is_library_file(filename: str) -> bool:
    """The stdlib or an installed package (numpy...): never the line to blame."""
    if filename.startswith(_SHIPPED):  # the bundled operators of an installed asc-tui
        return False
    return bool(_LIBRARY.search(filename)) or filename.startswith((sys.base_prefix, sys.prefix))


def location_from_traceback(tb) -> tuple[str | None, int | None]:
    """Innermost traceback entry in a user file (operators, not a library), else the innermost
    of all."""
    frames = traceback.extract_tb(tb)
    for fs in reversed(frames):
        if is_user_file(fs.filename) and not is_library_file(fs.filename):
            return fs.filename, fs.lineno
    if frames:
        return frames[-1].filename, frames[-1].lineno
    return None, None


def source_line(file: str | None, line: int | None) -> str | None:
    if not file or not line:
        return None
    try:
        lines = Path(file).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    if 1 <= line <= len(lines):
        text = lines[line - 1].strip()
        if "\ufffd" in text or any(ord(ch) < 32 and ch != "\t" for ch in text):
            return None  # a binary file's "line": control bytes would garble the terminal
        return text
    return None
