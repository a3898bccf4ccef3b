"""C++ operators end to end: kernel file + spec, launch binding, params, debugging utilities."""

from cxxop import copy_kernel, make_op

from asc_tui.cxx.cache import clear_memory, get_program
from asc_tui.devkit.run.loader import list_operators, load_operator, resolve_operator
from asc_tui.devkit.run.runner import RunRequest, run


def test_a_cpp_operator_runs_and_verifies(tmp_path):
    report = run(RunRequest(str(make_op(tmp_path, copy_kernel()))))
    assert not report.errors, report.errors
    assert report.precision.verdict == "PASS"


def test_the_spec_path_also_names_the_cpp_operator(tmp_path):
    make_op(tmp_path, copy_kernel())
    op = load_operator(tmp_path / "copy.py")
    assert op.path.endswith("copy.asc") and op.name == "copy"


def test_records_and_hot_lines_name_the_cpp_file(tmp_path):
    path = make_op(tmp_path, copy_kernel())
    report = run(RunRequest(str(path)))
    files = {f for f, _ in report.emulation.lines}
    assert str(path) in files
    lines = {ln for f, ln in report.emulation.lines if f == str(path)}
    assert 14 in lines  # DataCopy(t, xg, n);


def test_gm_addr_arithmetic_is_in_bytes_and_typed_pointers_in_elements(tmp_path):
    kernel = copy_kernel().replace(
        "xg.SetGlobalBuffer((__gm__ float*)x, n);",
        "xg.SetGlobalBuffer((__gm__ float*)(x + 8 * sizeof(float)), n - 8);",
    )
    kernel = kernel.replace(
        "yg.SetGlobalBuffer((__gm__ float*)y, n);", "yg.SetGlobalBuffer((__gm__ float*)y + 8, n - 8);"
    )
    kernel = kernel.replace("DataCopy(t, xg, n);", "DataCopy(t, xg, n - 8);").replace(
        "DataCopy(yg, t, n);", "DataCopy(yg, t, n - 8);"
    )
    golden = "__import__('numpy').concatenate([x[:0], __import__('numpy').zeros(8, x.dtype), x[8:]])"
    report = run(RunRequest(str(make_op(tmp_path, kernel, golden=golden))))
    assert not report.errors, report.errors
    assert report.precision.verdict == "PASS"


def test_params_bind_to_constexpr_and_reach_template_arguments(tmp_path):
    path = make_op(tmp_path, copy_kernel(), params='{"DEPTH": Param(2, values=[1, 2])}')
    op = load_operator(path)
    assert op.params["DEPTH"].default == 1  # the current choice is the C++ literal
    prog = get_program(path, None, {"DEPTH": 2}, {})
    src = "".join(open(path).read())
    assert "DEPTH" in src and prog.constants == {"DEPTH": 2}
    report = run(RunRequest(str(path), params={"DEPTH": 2}))
    assert not report.errors, report.errors
    assert report.params["DEPTH"] == 2


def test_params_bind_to_object_like_defines(tmp_path):
    kernel = copy_kernel("Muls(t, t, (float)SCALE, n);").replace(
        "constexpr int32_t DEPTH = 1;", "constexpr int32_t DEPTH = 1;\n#define SCALE 2"
    )
    path = make_op(tmp_path, kernel, params='{"SCALE": Param(2, values=[2, 3])}', golden="x * 3")
    report = run(RunRequest(str(path), params={"SCALE": 3}))
    assert not report.errors, report.errors
    assert report.precision.verdict == "PASS"


def test_tiling_fields_fill_kernel_parameters_by_name_with_cpp_types(tmp_path):
    kernel = copy_kernel("Adds(t, t, (float)bias, n);").replace("uint32_t n)", "uint32_t n, int8_t bias)")
    path = make_op(tmp_path, kernel, fields="n: int\n    bias: int", tiling="case.n, 257", golden="x + 1")
    report = run(RunRequest(str(path)))
    assert not report.errors, report.errors
    assert report.precision.verdict == "PASS"  # 257 as int8_t is 1


def test_struct_parameter_and_tiling_data_macros(tmp_path):
    (tmp_path / "copy_tiling.h").write_text(
        "#pragma once\nBEGIN_TILING_DATA_DEF(CopyTilingData)\n    TILING_DATA_FIELD_DEF(uint32_t, n);\n"
        "    TILING_DATA_FIELD_DEF(float, scale);\nEND_TILING_DATA_DEF;\n"
    )
    kernel = copy_kernel("Muls(t, t, td.scale, n);").replace(
        "uint32_t n)\n{", "GM_ADDR tiling)\n{\n    GET_TILING_DATA(td, tiling);\n    uint32_t n = td.n;"
    )
    kernel = '#include "copy_tiling.h"\n' + kernel
    path = make_op(
        tmp_path, kernel, fields="n: int\n    scale: float", tiling="case.n, 0.5", golden="x * 0.5"
    )
    report = run(RunRequest(str(path)))
    assert not report.errors, report.errors
    assert report.precision.verdict == "PASS"


def test_template_kernels_are_instantiated_at_the_launch(tmp_path):
    kernel = """
    #include "kernel_operator.h"
    template <uint32_t LEN, typename T>
    __global__ __vector__ void copy(__gm__ T* x, __gm__ T* y)
    {
        AscendC::TPipe pipe;
        AscendC::TQue<AscendC::TPosition::VECIN, 1> q;
        AscendC::GlobalTensor<T> xg, yg;
        xg.SetGlobalBuffer(x, LEN);
        yg.SetGlobalBuffer(y, LEN);
        pipe.InitBuffer(q, 1, LEN * sizeof(T));
        AscendC::LocalTensor<T> t = q.AllocTensor<T>();
        AscendC::DataCopy(t, xg, LEN);
        AscendC::PipeBarrier<PIPE_ALL>();
        AscendC::DataCopy(yg, t, LEN);
        q.FreeTensor(t);
    }
    """
    path = make_op(tmp_path, kernel, fields="LEN: int\n    T: str", tiling="case.n, 'float32'")
    report = run(RunRequest(str(path)))
    assert not report.errors, report.errors
    assert report.precision.verdict == "PASS"


def test_printf_and_dump_tensor_land_in_the_run_log_with_the_cpp_line(tmp_path):
    body = 'printf("n=%u first=%d\\n", n, 7);\n    DumpTensor(t, 5, 4);'
    path = make_op(tmp_path, copy_kernel(body))
    report = run(RunRequest(str(path)))
    texts = [(e.text, e.file, e.line) for e in report.emulation.log]
    assert ("n=64 first=7", str(path), 17) in texts
    assert any(t.startswith("DumpTensor desc=5 size=4") and ln == 18 for t, _f, ln in texts)


def test_a_failed_assert_stops_the_run_at_its_line(tmp_path):
    path = make_op(tmp_path, copy_kernel('ascendc_assert(n < 10, "n=%u too big", n);'))
    report = run(RunRequest(str(path)))
    assert report.errors and "n=64 too big" in report.errors[0].message
    assert report.errors[0].file == str(path) and report.errors[0].line == 17


def test_translation_errors_are_build_errors_of_the_run(tmp_path):
    path = make_op(tmp_path, copy_kernel("undefined_call(t);"))
    report = run(RunRequest(str(path)))
    err = report.errors[0]
    assert err.kind == "build" and err.file == str(path) and err.line == 17
    assert "^" in err.snippet


def test_discovery_lists_cpp_operators_beside_their_spec(tmp_path):
    (tmp_path / "cpp").mkdir()
    make_op(tmp_path / "cpp", copy_kernel())
    (tmp_path / "cpp" / "lonely.asc").write_text("// no spec: not an operator")
    found = list_operators(tmp_path)
    assert [p.name for p in found] == ["copy.asc"]
    assert resolve_operator("copy", tmp_path).name == "copy.asc"


def test_unchanged_sources_translate_once(tmp_path):
    path = make_op(tmp_path, copy_kernel())
    a = get_program(path)
    assert get_program(path) is a
    clear_memory()
    b = get_program(path)  # from the disk cache: same generated code
    assert b is not a and b.entry == a.entry
    (tmp_path / "copy.asc").write_text(copy_kernel("PipeBarrier<PIPE_V>();"))
    assert get_program(path) is not b


def test_a_header_change_is_seen(tmp_path):
    (tmp_path / "k.h").write_text("#pragma once\nconstexpr float S = 2.0f;\n")
    path = make_op(tmp_path, '#include "k.h"\n' + copy_kernel("Muls(t, t, S, n);"), golden="x * 2")
    assert run(RunRequest(str(path))).precision.verdict == "PASS"
    (tmp_path / "k.h").write_text("#pragma once\nconstexpr float S = 3.0f;\n")
    assert run(RunRequest(str(path))).precision.verdict != "PASS"


def test_static_tensor_style_kernels_with_local_mem_allocator_and_block_idx(tmp_path):
    kernel = """
    #include "kernel_operator.h"
    template <uint32_t LEN>
    __global__ __vector__ void copy(__gm__ float* x, __gm__ float* y)
    {
        AscendC::InitSocState();
        AscendC::GlobalTensor<float> xg, yg;
        xg.SetGlobalBuffer(x + block_idx * LEN, LEN);
        yg.SetGlobalBuffer(y + block_idx * LEN, LEN);
        AscendC::LocalMemAllocator<AscendC::Hardware::UB> ub;
        AscendC::LocalTensor<float> t = ub.Alloc<float, LEN>();
        AscendC::DataCopy(t, xg, LEN);
        AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);
        AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);
        AscendC::Muls(t, t, 2.0f, LEN);
        AscendC::PipeBarrier<PIPE_ALL>();
        AscendC::DataCopy(yg, t, LEN);
    }
    """
    path = make_op(tmp_path, kernel, fields="LEN: int", tiling="case.n", golden="x * 2")
    report = run(RunRequest(str(path)))
    assert not report.errors, report.errors
    assert report.precision.verdict == "PASS"


def test_a_kernel_api_method_the_twin_lacks_is_named_at_build(tmp_path):
    path = make_op(tmp_path, copy_kernel("q.NoSuchMethod();"))
    report = run(RunRequest(str(path)))
    err = report.errors[0]
    assert err.kind == "build" and "AscendC::TQue::NoSuchMethod is not in the kernel API twin" in err.message
    assert err.line == 17


def test_cli_run_json_reports_cpp_errors_with_file_line_and_caret(tmp_path):
    import json
    import os
    import subprocess
    import sys

    path = make_op(tmp_path, copy_kernel("int32_t bad = missing + 1;"))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    p = subprocess.run(
        [sys.executable, "-m", "asc_tui", "run", str(path), "--json"], capture_output=True, text=True, env=env
    )
    err = json.loads(p.stdout)["errors"][0]
    assert p.returncode != 0
    assert err["file"] == str(path) and err["line"] == 17 and err["kind"] == "build"
    assert "unknown identifier 'missing' at copy.asc:17:19" in err["message"]
    assert err["snippet"].splitlines()[1].endswith("^")


def test_kernel_names_the_entry_when_the_file_has_several(tmp_path):
    kernel = (
        copy_kernel()
        + '\nextern "C" __global__ __aicore__ void other(GM_ADDR x, GM_ADDR y, uint32_t n) { }\n'
    )
    path = make_op(tmp_path, kernel)
    assert "several kernels" in run(RunRequest(str(path))).errors[0].message
    spec = path.with_suffix(".py")
    spec.write_text(spec.read_text() + '\nKERNEL = "copy"\n')
    assert run(RunRequest(str(path))).precision.verdict == "PASS"


def test_mixed_kernels_branch_on_ascend_is_aic_and_aiv(tmp_path):
    kernel = copy_kernel().replace("__global__ __aicore__", "__global__ __mix__(1, 2)")
    kernel = kernel.replace(
        "    TPipe pipe;",
        "    if ASCEND_IS_AIC {\n        return;\n    }\n    if (GetSubBlockIdx() != 0) { return; }\n    TPipe pipe;",
    )
    path = make_op(tmp_path, kernel)
    op = load_operator(path)
    assert op.kernel.core_type == "mix"
    report = run(RunRequest(str(path)))
    assert not report.errors, report.errors
    assert report.precision.verdict == "PASS"


def test_side_macros_give_the_cube_and_vector_sides_their_own_code(tmp_path):
    kernel = copy_kernel().replace("__global__ __aicore__", "__global__ __mix__(1, 2)")
    kernel = kernel.replace(
        "    TPipe pipe;",
        "#if defined(__DAV_C220_CUBE__)\n    return;\n#endif\n#ifdef __DAV_C220_VEC__\n    if (GetSubBlockIdx() == 1) { return; }\n#endif\n    TPipe pipe;",
    )
    report = run(RunRequest(str(make_op(tmp_path, kernel))))
    assert not report.errors, report.errors
    assert report.precision.verdict == "PASS"


def test_scalar_gm_pointers_and_word_copies_of_a_tiling_struct(tmp_path):
    kernel = """
    #include "kernel_operator.h"
    struct CopyTiling { uint32_t n; int32_t bias; };
    __aicore__ inline void LoadTiling(CopyTiling* t, GM_ADDR src)
    {
        uint32_t* dst = reinterpret_cast<uint32_t*>(t);
        auto words = reinterpret_cast<__gm__ uint32_t*>(src);
        for (uint32_t i = 0; i < sizeof(CopyTiling) / sizeof(uint32_t); i++, dst++) {
            *dst = *(words + i);
        }
    }
    extern "C" __global__ __aicore__ void copy(GM_ADDR x, GM_ADDR y, GM_ADDR tiling)
    {
        CopyTiling t;
        LoadTiling(&t, tiling);
        __gm__ float* xp = (__gm__ float*)x;
        __gm__ float* yp = (__gm__ float*)y;
        for (uint32_t i = 0; i < t.n; i++) {
            yp[i] = xp[i] + (float)t.bias;
        }
        *yp += 0.5f;
    }
    """
    golden = "__import__('numpy').concatenate([x[:1] + 2.5, x[1:] + 2])"
    path = make_op(tmp_path, kernel, n=8, fields="n: int\n    bias: int", tiling="case.n, 2", golden=golden)
    report = run(RunRequest(str(path)))
    assert not report.errors, report.errors
    assert report.precision.verdict == "PASS"
