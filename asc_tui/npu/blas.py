"""Run the emulator's tile-sized matmuls on one BLAS thread.

Why: a multi-threaded OpenBLAS spins up its worker threads for every call; for the emulated
cube's tile-sized matmuls (~10 MFLOP) that costs far more than the arithmetic, and on a busy
machine it is catastrophic (measured on the shared 2-core dev box: a 112x576 @ 576x128 fp32
matmul took 40 ms with 2 threads, 0.17 ms with 1; letting the 67 MFLOP flushes of a 1024³
matmul use 2 threads did not make the emulation faster in our measurements).

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
            os.path.join(base, ".libs", "*openblas*"))
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


class one_thread:
    """BLAS limited to one thread for the duration (restored afterwards): a launch's matmuls
    run on the numbers thread (npu/offload.py) while the emulator keeps the other core.

    Restored only after the launch's last job: a job running after the restore would use the
    BLAS thread pool, whose workers then spin for ~0.1 s and slow down the next launch.
    """

    def __enter__(self):
        self.n = _get() if _set is not None else 1
        if self.n > 1:
            _set(1)
        return self

    def __exit__(self, *exc):
        if self.n > 1:
            _set(self.n)
        return False
