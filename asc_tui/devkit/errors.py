"""The error values the front ends show: `OperatorError` and its kinds carry file, line and hint;
`ErrorInfo` is their serialisable form. Defined by the emulator, offered to the front ends here."""

from __future__ import annotations

from ..npu.errors import BuildError, ChipError, ErrorInfo, OperatorError, TilingError

__all__ = ["BuildError", "ChipError", "ErrorInfo", "OperatorError", "TilingError"]
