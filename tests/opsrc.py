"""Build small operator sources for tests: a template with a kernel body to fill in."""

from __future__ import annotations

import textwrap

HEADER = """
from asc_tui import ascendc as AscendC
from asc_tui.ascendc import *
from asc_tui.operator import In, Out, Launch, Param

CASES = {"default": dict(n=N)}
PARAMS = {}

def tensors(case):
    return {"x": In(case.n, half), "y": Out(case.n, half)}

def tiling(case, p):
    return Launch(BLOCK_DIM, case.n)

def golden(case, x):
    return x

@AscendC.kernel
def kernel(x, y, n):
"""


def operator_source(body: str, n: int = 2048, block_dim: int = 1) -> str:
    """A one-kernel operator copying x to y; `body` is the kernel body (4-space indented)."""
    head = HEADER.replace("N)", f"{n})").replace("BLOCK_DIM", str(block_dim))
    return head + textwrap.indent(textwrap.dedent(body).strip("\n"), "    ") + "\n"


def line_of(source: str, marker: str = "# <- here") -> int:
    for i, line in enumerate(source.splitlines(), 1):
        if marker in line:
            return i
    raise AssertionError(f"marker {marker!r} not in source")
