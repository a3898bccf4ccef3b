"""ml_dtypes (bfloat16, int4b_t) is imported on first use: it costs about 0.5 s of CPU, more than
numpy and the emulator together, in every worker child and CLI start (ascendc/dtypes.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np

from asc_tui.ascendc import dtypes
from asc_tui.operator import Case

REPO_ROOT = Path(__file__).resolve().parents[1]


def _fresh(code: str) -> str:
    """Run `code` in a new interpreter (this one may have ml_dtypes already) and return its output."""
    p = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=REPO_ROOT
    )
    assert p.returncode == 0, p.stderr
    return p.stdout.strip()


def test_the_engine_a_worker_child_and_the_cli_start_without_ml_dtypes():
    out = _fresh(
        "import sys; import asc_tui.devkit.run.runner, asc_tui.devkit.run.worker_child, asc_tui.cli, "
        "asc_tui.cxx.translate, asc_tui.cxx.host; from asc_tui import ascendc as A; "
        "from asc_tui.devkit.run.runner import RunRequest, run; "
        "r = run(RunRequest('add_custom', timing_only=True)); assert not r.errors, r.errors; "
        "print('ml_dtypes' in sys.modules, A.half, A.dtypes.dtype_name(A.half), A.dtypes.is_int4(A.half))"
    )
    assert out == "False float16 float16 False"


def test_the_lazy_types_are_ml_dtypes_own_and_named_as_before():
    out = _fresh(
        "import sys; from asc_tui import ascendc as A; from asc_tui.ascendc.dtypes import int4b_t; "
        "import ml_dtypes, numpy as np; "
        "print(A.bfloat16 == np.dtype(ml_dtypes.bfloat16), int4b_t == np.dtype(ml_dtypes.int4), "
        "A.dtypes.dtype_name(A.bfloat16), A.dtypes.dtype_name('int4'), A.dtypes.is_int4(int4b_t), "
        "'bfloat16' in A.__all__)"
    )
    assert out == "True True bfloat16 int4b_t True True"


def test_a_case_naming_bfloat16_loads_it_so_operator_code_can_say_np_dtype_of_it():
    out = _fresh(
        "import sys, numpy as np; from asc_tui.operator import Case; "
        "c = Case('h', dict(n=8, dtype='float16')); np.dtype(c.dtype); a = 'ml_dtypes' in sys.modules; "
        "c = Case('bf16', dict(n=8, dtype='bfloat16')); print(a, np.dtype(c.dtype), np.dtype(c['dtype']))"
    )
    assert out == "False bfloat16 bfloat16"


def test_names_and_tables_see_the_lazy_types_in_this_process_too():
    assert Case("c", dict(dtype="bf16")).dtype == "bf16"
    assert dtypes.as_dtype("bf16") == dtypes.bfloat16 and dtypes.as_dtype("int4") == dtypes.int4b_t
    assert dtypes.nbytes_of(dtypes.int4b_t, 5) == 3 and dtypes.nbytes_of(np.dtype(np.float16), 5) == 10
    from asc_tui.ascendc.cube.fixquant import QuantMode_t, quant_types
    from asc_tui.ascendc.matmul.tiling import DataType

    assert quant_types(QuantMode_t.F322BF16) == (dtypes.float32, (dtypes.bfloat16,))
    assert DataType.DT_BF16 is DataType.DT_BFLOAT16 is dtypes.bfloat16
