"""No internal text: each failure the fuzz run met is a user-level message at the user's line."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from cxxkernel import MAIN, line_of, run_kernel

from asc_tui.devkit.run.runner import RunRequest, run
from asc_tui.devkit.run.worker_child import escaped, innermost_user_frame
from asc_tui.npu.errors import OperatorError

ROOT = Path(__file__).resolve().parents[1]
#: What a user must never read: Python exception names and numpy's or Python's own wording.
INTERNAL = re.compile(
    r"TypeError|ValueError|AttributeError|IndexError|SimpleNamespace|numpy\.|could not broadcast|"
    r"object is not callable|unsupported operand type"
)

UB_TILE = """
extern "C" __global__ __aicore__ void k(GM_ADDR x, GM_ADDR z)
{
    AscendC::GlobalTensor<half> xg, zg;
    xg.SetGlobalBuffer((__gm__ half*)x, 256);
    zg.SetGlobalBuffer((__gm__ half*)z, 256);
    AscendC::TPipe pipe;
    AscendC::TQue<AscendC::TPosition::VECIN, 1> q;
    pipe.InitBuffer(q, 1, 256 * sizeof(half));
    AscendC::LocalTensor<half> t = q.AllocTensor<half>();
BODY
    AscendC::DataCopy(zg, t, 256);
    q.FreeTensor(t);
}
"""


def _kernel_error(tmp_path, body: str, main: str = MAIN) -> OperatorError:
    with pytest.raises(OperatorError) as info:
        run_kernel(
            tmp_path,
            UB_TILE.replace("BODY", textwrap.indent(body, "    ")),
            np.zeros(256, np.float16),
            np.float16,
            256,
            main=main,
        )
    return info.value


def _assert_user_level(err: OperatorError, path: Path, needle: str) -> None:
    assert not INTERNAL.search(err.message), err.message
    assert err.file == str(path) and err.line == line_of(path, needle), (err.file, err.line)


def test_arithmetic_on_a_struct_reads_like_the_compiler(tmp_path):
    e = _kernel_error(tmp_path, "AscendC::Nd2NzParams p;\nuint32_t n = p * 2;\n")
    _assert_user_level(e, tmp_path / "k.asc", "p * 2")
    assert e.message == "invalid operands to binary expression ('Nd2NzParams' * 'int')"


def test_a_functional_cast_to_half_is_a_cast_not_a_call(tmp_path):
    body = (
        "half h = half(1.5);\nauto zero = half();\n"
        "AscendC::Duplicate(t, h, 128);\nAscendC::Duplicate(t[128], zero, 128);\n"
    )
    z, _ = run_kernel(
        tmp_path,
        UB_TILE.replace("BODY", textwrap.indent(body, "    ")),
        np.zeros(256, np.float16),
        np.float16,
        256,
    )
    assert (z[:128] == 1.5).all() and (z[128:] == 0).all()


def test_functional_casts_in_host_code(tmp_path):
    main = MAIN.replace(
        "WriteFile(",
        'half hv = half(1.5);\n    printf("%f %u\\n", float(hv) + float(), uint32_t(hv) * 2);\n'
        "    WriteFile(",
    )
    _, acl = run_kernel(
        tmp_path, UB_TILE.replace("BODY", ""), np.zeros(256, np.float16), np.float16, 256, main=main
    )
    assert acl.out.getvalue().strip() == "1.500000 2"


def test_a_host_memcpy_past_its_buffer_names_the_call_not_numpy(tmp_path):
    main = MAIN.replace("WriteFile(", "memcpy(zh, xh + inBytes, outBytes);\n    WriteFile(")
    e = _kernel_error(tmp_path, "", main=main)
    _assert_user_level(e, tmp_path / "k.asc", "memcpy(zh")
    assert "memcpy source 'xh': 512 bytes from offset 512 overrun its 512 bytes" in e.message


def test_a_read_file_past_its_buffer_names_the_call(tmp_path):
    main = MAIN.replace(
        'ReadFile("./input/x.bin", inBytes, xh, inBytes);',
        'ReadFile("./input/x.bin", inBytes, xh + 8, inBytes);',
    )
    e = _kernel_error(tmp_path, "", main=main)
    _assert_user_level(e, tmp_path / "k.asc", "ReadFile(")
    assert "512 bytes from offset 8 overrun 'xh'" in e.message


def test_a_struct_launched_where_a_gm_pointer_belongs_names_the_launch(tmp_path):
    head = "struct TilingT { uint32_t n; };\n"
    main = MAIN.replace(
        "LAUNCH<<<BLOCKS, nullptr, stream>>>(xd, zd);",
        "TilingT s; s.n = 1;\n    LAUNCH<<<BLOCKS, nullptr, stream>>>(s, zd);",
    )
    src = head + UB_TILE.replace("BODY", "")
    with pytest.raises(OperatorError) as info:
        run_kernel(tmp_path, src, np.zeros(256, np.float16), np.float16, 256, main=main)
    e = info.value
    _assert_user_level(e, tmp_path / "k.asc", "<<<")
    assert "k's parameter 1 (x) is a GM pointer (GM_ADDR); the launch passes a struct value" in e.message


def test_set_global_buffer_of_a_non_address_says_what_it_got(tmp_path):
    src = UB_TILE.replace("void k(GM_ADDR x, GM_ADDR z)", "void k(GM_ADDR x, GM_ADDR z, uint32_t n)")
    src = src.replace(
        "xg.SetGlobalBuffer((__gm__ half*)x, 256);", "xg.SetGlobalBuffer((__gm__ half*)n, 256);"
    )
    main = MAIN.replace(
        "LAUNCH<<<BLOCKS, nullptr, stream>>>(xd, zd);", "LAUNCH<<<BLOCKS, nullptr, stream>>>(xd, zd, 7);"
    )
    with pytest.raises(OperatorError) as info:
        run_kernel(tmp_path, src.replace("BODY", ""), np.zeros(256, np.float16), np.float16, 256, main=main)
    e = info.value
    _assert_user_level(e, tmp_path / "k.asc", "(__gm__ half*)n")
    assert e.message == "SetGlobalBuffer expects a GM address (a __gm__ pointer, GM_ADDR), got an integer"


def test_a_spec_with_a_bad_block_count_points_at_its_launch(tmp_path):
    for name in ("add_custom.asc", "add_custom_tiling.h", "kernel_utils.h", "add_custom.py"):
        shutil.copy(ROOT / "operators" / "cpp" / name, tmp_path / name)
    spec = tmp_path / "add_custom.py"
    spec.write_text(
        spec.read_text().replace(
            "return Launch(-(-case.n // block_length),", "return Launch(0 * block_length,"
        )
    )
    rep = run(RunRequest(str(tmp_path / "add_custom.asc")))
    (err,) = rep.errors
    assert err.file == str(spec) and err.line == line_of(spec, "return Launch(0 * block_length")
    assert "block_dim=0" in err.message


def test_a_python_operator_returning_a_bad_block_count_points_at_its_launch(tmp_path):
    src = (ROOT / "operators" / "add_custom.py").read_text()
    assert "    return Launch(" in src
    p = tmp_path / "op.py"
    p.write_text(src.replace("    return Launch(", "    return Launch(70000 + 0 *", 1))
    rep = run(RunRequest(str(p)))
    (err,) = rep.errors
    assert err.line == line_of(p, "return Launch(70000") and "from 1 to 65535" in err.message


def test_a_block_spinning_after_sync_all_is_named_when_the_worker_stops_it(tmp_path):
    d = tmp_path / "blocksum"
    shutil.copytree(ROOT / "tests" / "samples" / "blocksum", d)
    src = d / "blocksum.asc"
    src.write_text(
        src.read_text().replace("AscendC::SyncAll();", "AscendC::SyncAll();\n    while (true) {\n    }", 1)
    )
    out = subprocess.run(
        [sys.executable, "-m", "asc_tui", "run", str(d), "--timeout", "3", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    doc = json.loads(out.stdout)
    (err,) = (doc[0] if isinstance(doc, list) else doc)["errors"]
    assert err["file"] == str(src) and err["line"] == line_of(src, "while (true)"), err


def test_a_stack_dump_names_the_thread_running_user_code_before_waiting_ones():
    dump = textwrap.dedent(
        """\
        Thread 0x00007f0000000002 (most recent call first):
          File "/usr/lib/python3.11/threading.py", line 320 in wait
          File "/pkg/asc_tui/npu/coop.py", line 200 in wait
          File "/user/k.asc", line 31 in k

        Thread 0x00007f0000000001 (most recent call first):
          File "/user/k.asc", line 33 in k
          File "/pkg/asc_tui/npu/coop.py", line 120 in run

        Current thread 0x00007f0000000000 (most recent call first):
          File "/pkg/asc_tui/devkit/worker_child.py", line 100 in serve
        """
    )
    assert innermost_user_frame(dump) == ("/user/k.asc", 33)


def _internal_failure(module) -> object:
    """A function whose code lives in `module`'s file (asc-tui's own code) and fails: the
    injected internal bug."""
    ns: dict = {}
    exec(compile("def boom(*args, **kw):\n    raise KeyError('injected')\n", module.__file__, "exec"), ns)
    return ns["boom"]


def test_an_exception_inside_asc_tui_is_an_internal_error_at_the_users_line(monkeypatch):
    """The fallback: asc-tui's own code raising says so at the user's nearest line, with the
    Python detail only in the hint."""
    import asc_tui.ascendc as AscendC
    from asc_tui.ascendc.vector import basic as vector

    monkeypatch.setattr(AscendC, "Add", _internal_failure(vector))
    op = ROOT / "operators" / "add_custom.py"
    rep = run(RunRequest(str(op)))
    (err,) = rep.errors
    assert err.kind == "internal" and err.message.startswith("internal error in asc-tui")
    assert not INTERNAL.search(err.message) and "KeyError" not in err.message
    assert "please report it: KeyError" in err.hint and "injected" in err.hint
    assert err.file == str(op) and err.line == line_of(op, "AscendC.Add(")


def test_an_exception_escaping_a_tool_is_an_internal_error_at_the_operator(tmp_path):
    """What the worker answers for an exception that left the run: asc-tui's own is an internal
    error (at the operator's file when no user frame is on the stack); the user's own code
    raising stays the user's exception at its line."""
    from asc_tui.devkit.run import runner

    op = tmp_path / "op.py"
    op.write_text("x = 1\n")
    try:
        _internal_failure(runner)()
    except KeyError as exc:  # (without this test's own frame: only asc-tui's code is on it)
        info = escaped(exc.with_traceback(exc.__traceback__.tb_next), RunRequest(str(op)))
    assert info.kind == "internal" and info.message == "internal error in asc-tui"
    assert info.file == str(op) and "KeyError" in info.hint
    ns: dict = {}
    exec(compile("def mine():\n    return {}['k']\n", str(op), "exec"), ns)
    try:
        ns["mine"]()
    except KeyError as exc:
        user = escaped(exc, RunRequest(str(op)))
    assert user.kind == "crash" and (user.file, user.line) == (str(op), 2)


def test_a_python_kernel_calling_a_dtype_like_a_cxx_cast_gets_a_hint(write_operator):
    src = (ROOT / "operators" / "bugs" / "clobber_input.py").read_text()
    p = write_operator(
        "calls_half",
        src.replace("    def Process(self):\n", "    def Process(self):\n        h = half(1.0)\n"),
    )
    (err,) = run(RunRequest(str(p))).errors
    assert err.line == line_of(p, "h = half(1.0)")
    assert "np.float16(x)" in err.hint


def test_a_copy_error_raised_inside_asc_tui_names_the_users_line():
    """A DataCopy the high-level Matmul issues (asc-tui's own code) that goes wrong is the
    user's call of the Matmul: the error names the user's line, never a file of asc-tui."""
    import sys

    from asc_tui import PACKAGE_DIR
    from asc_tui.ascendc.copy import datacopy

    inner = compile(
        "def where():\n    return datacopy._where(sys._getframe())\n", str(PACKAGE_DIR / "x.py"), "exec"
    )
    scope = {"datacopy": datacopy, "sys": sys}
    exec(inner, scope)
    line = sys._getframe().f_lineno + 1
    file, got = scope["where"]()
    assert (file, got) == (__file__, line)


def test_a_host_store_past_a_narrow_type_wraps_as_c_does():
    """`uint8_t y[i] = 256` in host code wraps to 0 (C's conversion), not a Python OverflowError."""
    import numpy as np

    from asc_tui.cxx.host.acl import Buffer, Ptr

    p = Ptr(Buffer("y", 4, False, None), 0, np.dtype(np.uint8))
    p.set(1, 256 + 7)
    p.set(2, np.int64(256))
    p.set(3, 256.7)  # (a float into an integer: truncated, then wrapped)
    q = Ptr(Buffer("z", 4, False, None), 0, np.dtype(np.int8))
    q.set(0, 200)
    assert p.get(1) == 7 and p.get(2) == 0 and p.get(3) == 0 and q.get(0) == -56


def test_printf_with_its_arguments_out_of_order_prints_them():
    """A swapped `printf(cycles, "fmt %d")` prints what it was given, not an internal error."""
    import importlib

    kernel = importlib.import_module("asc_tui.ascendc.kernel")  # (the package's `kernel` is the decorator)
    seen = []
    kernel_log = kernel.log
    try:
        kernel.log = lambda text, fr, level=None: seen.append(text)
        kernel.printf(1234, "[LOG] cycles %d\n")
    finally:
        kernel.log = kernel_log
    assert seen == ["1234 [LOG] cycles %d"]
