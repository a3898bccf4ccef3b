"""The bundled C++ operators (operators/cpp/*.asc) are exact twins of the Python ones.

Each .asc kernel issues the instruction stream of its Python twin in operators/: the same
calls, sizes, queue and event operations and per-block offsets. So, for the same case and
the same parameter values (the twin's `tile_length` is the C++ `TILE_LENGTH` constexpr), the
outputs are the same bits and every block's timeline is the same to the cycle, in full and in
timing-only emulation. Only the source locations differ: the C++ run names the .asc (or its
header) and its lines.
"""

from __future__ import annotations

import linecache
import shutil
from pathlib import Path

import numpy as np
import pytest

from asc_tui.devkit.debug.debugger import DebugRequest, debug
from asc_tui.devkit.profile.profiler import profile
from asc_tui.devkit.run.loader import load_operator
from asc_tui.devkit.run.runner import RunRequest, prepare, run
from asc_tui.npu.chip import load_chip
from asc_tui.npu.launch import launch

OPS = Path(__file__).resolve().parent.parent / "operators"
CPP = OPS / "cpp"

# (operator, case, twin params, C++ params): the same run spelled for each side
PAIRS = [
    ("add_custom", "default", {}, {}),
    ("add_custom", "tail", {}, {}),
    (
        "add_custom",
        "tail",
        dict(tile_length=1024, buffer_num=1, block_dim=5),
        dict(TILE_LENGTH=1024, BUFFER_NUM=1, block_dim=5),
    ),
    ("add_custom", "fp32", {}, {}),
    ("add_custom", "bf16", dict(tile_length=512, block_dim=3), dict(TILE_LENGTH=512, block_dim=3)),
    ("vector_add_bias", "default", {}, {}),
    (
        "vector_add_bias",
        "default",
        dict(tile_length=4096, buffer_num=2, block_dim=4),
        dict(TILE_LENGTH=4096, BUFFER_NUM=2, block_dim=4),
    ),
    ("softmax", "default", {}, {}),
    ("softmax", "small", dict(buffer_num=1, block_dim=2), dict(BUFFER_NUM=1, block_dim=2)),
    ("softmax", "wide", {}, {}),
    ("softmax", "fp32", {}, {}),
    ("rms_norm", "default", {}, {}),
    ("rms_norm", "small", dict(buffer_num=1, block_dim=2), dict(BUFFER_NUM=1, block_dim=2)),
    ("rms_norm", "fp32", {}, {}),
    ("rms_norm", "llama", {}, {}),
    ("matmul", "small", {}, {}),
    ("matmul", "tails", {}, {}),
    (
        "matmul",
        "small",
        dict(tile_m=64, tile_n=128, tile_k=32, double_buffer=1, l0c_buffers=2, block_dim=8),
        dict(TILE_M=64, TILE_N=128, TILE_K=32, BUFFER_NUM=1, L0C_BUFFER_NUM=2, block_dim=8),
    ),
    ("matmul", "default", {}, {}),
    ("matmul_leaky", "small", {}, {}),
    ("matmul_leaky", "default", {}, {}),
    (
        "matmul_leaky",
        "default",
        dict(tile_m=64, tile_n=64, block_dim=8),
        dict(tile_m=64, tile_n=64, block_dim=8),
    ),
]
IDS = [
    f"{name}-{case}-{'-'.join(f'{k}={v}' for k, v in cpp.items()) or 'defaults'}"
    for name, case, _, cpp in PAIRS
]


def _pair(name: str):
    return load_operator(OPS / f"{name}.py"), load_operator(CPP / f"{name}.asc")


def _emulate(op, case: str, params: dict, numeric: bool):
    """Outputs (buffer name -> bytes; None when timing-only) and the emulation result."""
    _, _, _, lnch, _, gm = prepare(op, case, params, timing_only=not numeric, seed=0)
    em = launch(op.kernel, gm, lnch.tiling, lnch.block_dim, load_chip("ascend910b"), numeric=numeric)
    outputs = {g.buffer.name: g.buffer.data.tobytes() for g in gm} if numeric else None
    return outputs, em


def _timeline(em) -> list:
    """Every block's records, source locations left out: pipe, start, end, kind, op, bytes, link."""
    ops = np.array(em.ops, dtype=object)
    return [
        (
            b.block,
            b.core,
            b.wave,
            b.t_start,
            b.t_end,
            b.scalar_cycles,
            b.pipe.tobytes(),
            b.start.tobytes(),
            b.end.tobytes(),
            b.kind.tobytes(),
            b.nbytes.tobytes(),
            b.link.tobytes(),
            tuple(ops[b.op]),
        )
        for b in em.blocks
    ]


def _assert_same_timeline(twin_em, cpp_em) -> None:
    assert cpp_em.kernel_cycles == twin_em.kernel_cycles
    assert len(cpp_em.blocks) == len(twin_em.blocks)
    for want, got in zip(_timeline(twin_em), _timeline(cpp_em)):
        assert got == want, f"block {want[0]} differs"


@pytest.mark.parametrize("name,case,twin_params,cpp_params", PAIRS, ids=IDS)
def test_the_cpp_kernel_gives_its_twins_bits_and_timeline(name, case, twin_params, cpp_params):
    twin, cpp = _pair(name)
    want_out, want_em = _emulate(twin, case, twin_params, numeric=True)
    got_out, got_em = _emulate(cpp, case, cpp_params, numeric=True)
    assert got_out.keys() == want_out.keys()
    for buf, bits in want_out.items():
        assert got_out[buf] == bits, f"output {buf} differs"
    _assert_same_timeline(want_em, got_em)


@pytest.mark.parametrize("name,case,twin_params,cpp_params", PAIRS, ids=IDS)
def test_timing_only_gives_the_twins_timeline(name, case, twin_params, cpp_params):
    twin, cpp = _pair(name)
    _, want_em = _emulate(twin, case, twin_params, numeric=False)
    _, got_em = _emulate(cpp, case, cpp_params, numeric=False)
    _assert_same_timeline(want_em, got_em)


@pytest.mark.parametrize("name", ["add_custom", "rms_norm", "matmul", "matmul_leaky"])
def test_records_name_the_cpp_files_and_their_lines(name):
    _, cpp = _pair(name)
    _, em = _emulate(
        cpp, "small" if name in ("rms_norm", "matmul", "matmul_leaky") else "tail", {}, numeric=True
    )
    files = {Path(file) for file, _ in em.lines}
    assert files and all(f.parent == CPP and f.suffix in (".asc", ".h") for f in files), files
    assert CPP / f"{name}.asc" in files
    for file, line in em.lines:
        assert 1 <= line <= len(Path(file).read_text().splitlines())


def test_hot_lines_quote_the_cpp_source():
    report = run(RunRequest(str(CPP / "add_custom.asc"), case="tail"))
    assert report.passed, report.errors
    lines = profile(report).lines
    assert lines
    for hot in lines:
        assert hot.file == str(CPP / "add_custom.asc")
        assert hot.code == linecache.getline(hot.file, hot.line).strip()
    assert any("AscendC::DataCopyPad(" in hot.code for hot in lines)  # the tail tile's copies


def _instructions(op, case: str, params: dict) -> int:
    return _emulate(op, case, params, numeric=False)[1].instructions


def test_binding_tile_length_changes_the_instruction_count_as_the_twins_tile_length_does():
    twin, cpp = _pair("add_custom")
    for tile in (512, 4096):
        want = _instructions(twin, "default", dict(tile_length=tile))
        assert _instructions(cpp, "default", dict(TILE_LENGTH=tile)) == want
    assert _instructions(cpp, "default", dict(TILE_LENGTH=512)) > _instructions(cpp, "default", {})


def test_binding_buffer_num_reaches_the_queue_template_argument():
    twin, cpp = _pair("vector_add_bias")
    _, single = _emulate(cpp, "default", {}, numeric=False)
    _, double = _emulate(cpp, "default", dict(BUFFER_NUM=2), numeric=False)
    assert double.kernel_cycles < single.kernel_cycles  # copies now overlap the Add
    _, want = _emulate(twin, "default", dict(buffer_num=2), numeric=False)
    _assert_same_timeline(want, double)


KERNELS = sorted(CPP.glob("*.asc"))


@pytest.mark.parametrize("path", KERNELS, ids=[p.stem for p in KERNELS])
def test_cpp_operators_are_clean_under_every_sanitizer_tool(path):
    rep = debug(DebugRequest(str(path)))
    assert rep.clean, [f.format() for f in rep.findings] + [e.format() for e in rep.errors]


def test_a_sanitizer_finding_names_the_asc_line(tmp_path):
    """The teaching bug of operators/bugs/add_tail_oob.py, made in the C++ kernel: one tile too many."""
    for f in ("add_custom.asc", "add_custom.py", "add_custom_tiling.h", "kernel_utils.h"):
        shutil.copy(CPP / f, tmp_path / f)
    kernel = tmp_path / "add_custom.asc"
    src = kernel.read_text()
    bug = src.replace("uint32_t tiles = CeilDiv(length, tile);", "uint32_t tiles = length / tile + 1;")
    bug = bug.replace("uint32_t n = MinU32(tile, length - i * tile);", "uint32_t n = tile;")
    assert bug != src
    kernel.write_text(bug)
    rep = debug(DebugRequest(str(kernel), tools=("memcheck",)))
    line = bug.splitlines().index("            AscendC::DataCopy(xLocal, xGm[progress * tile], n);") + 1
    assert rep.findings and {(f.kind, f.file, f.line) for f in rep.findings} >= {
        ("out-of-bounds", str(kernel), line)
    }, [f.format() for f in rep.findings]
