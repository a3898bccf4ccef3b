"""One table of C scalar types for the kernel translator and the host interpreter (issue 31)."""

from __future__ import annotations

import numpy as np
import pytest

from asc_tui.cxx import ctype as T
from asc_tui.cxx.host.values import np_type

SCALAR_NAMES = sorted(n for n, t in T.SCALARS.items() if t.kind in ("int", "float") and t is not T.INT4)


@pytest.mark.parametrize("name", SCALAR_NAMES)
def test_host_and_kernel_agree_on_every_scalar(name):
    kernel, host = T.SCALARS[name], np_type(name)
    assert host.itemsize * 8 == kernel.bits
    if kernel.is_int:
        assert (host.kind == "i") == kernel.signed
    else:
        assert host.kind == "f" or host.name == "bfloat16"


def test_spelled_out_integer_types_keep_their_width_on_the_host():
    # once read as the 1-byte fallback: the host had its own, shorter table
    assert np_type("unsigned short") == np.uint16
    assert np_type("long long") == np.int64
    assert np_type("const unsigned char") == np.uint8
