"""Set how many threads BLAS uses: one during a launch (npu/numbers/offload.py), whose tile-sized
matmuls run on the numbers thread while the emulator keeps the other core.

Why not BLAS's own threads: a multi-threaded OpenBLAS spins up its worker threads for every
call; for the emulated cube's tile-sized matmuls (~10 MFLOP) that costs far more than the
arithmetic, and on a busy machine it is catastrophic (measured on the shared 2-core dev box: a
112x576 @ 576x128 fp32 matmul took 40 ms with 2 threads, 0.17 ms with 1). Its idle workers also
spin ~0.1 s after each call, taking the CPU the emulator runs on.

Found through ctypes in numpy's bundled OpenBLAS (`openblas_set_num_threads`, any symbol
suffix); where there is no such library this is a no-op.
"""

from __future__ import annotations

import ctypes
import glob
import os

_set = _get = None


def _load() -> None:
    global _set, _get
    try:
        import numpy

        base = os.path.dirname(numpy.__file__)
        libs = glob.glob(os.path.join(base, "..", "numpy.libs", "*openblas*")) + glob.glob(
            os.path.join(base, ".libs", "*openblas*")
        )
        for path in libs:
            lib = ctypes.CDLL(path)
            for prefix in ("scipy_openblas", "openblas"):
                for suffix in ("64_", ""):
                    s = getattr(lib, f"{prefix}_set_num_threads{suffix}", None)
                    g = getattr(lib, f"{prefix}_get_num_threads{suffix}", None)
                    if s is not None and g is not None:
                        g.restype = ctypes.c_int
                        _set, _get = s, g
                        return
    except OSError:
        pass


_load()


def set_threads(n: int | None) -> int | None:
    """Set how many threads BLAS uses (None: leave it); the count before, None if unknown."""
    if _set is None:
        return None
    before = _get()
    if n is not None and n != before:
        _set(n)
    return before
