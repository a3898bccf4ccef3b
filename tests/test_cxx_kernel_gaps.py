"""C++ kernels that use what the asc-devkit samples need beyond the basics: twin constants as
array sizes, braced arrays of structs, LocalTensor<T> at an address, custom TBufPools
(EXTERN_IMPL_BUFPOOL), host constants through class templates, element-wise scalar loops."""

import numpy as np
import pytest
from cxxkernel import line_of, run_kernel

from asc_tui import ascendc as AscendC
from asc_tui.cxx.files import cmake_defines
from asc_tui.cxx.kernel import vloop
from asc_tui.npu.errors import KernelError

SLICES = """
__global__ __vector__ void k(GM_ADDR x, GM_ADDR z)
{
    AscendC::GlobalTensor<float> xg, zg;
    xg.SetGlobalBuffer((__gm__ float*)x);
    zg.SetGlobalBuffer((__gm__ float*)z);
    AscendC::SliceInfo src[AscendC::K_MAX_DIM] = {{8, 23, 0, 2, 32}, {1, 1, 0, 1, 2}};
    AscendC::SliceInfo dst[] = {{0, 15, 0, 2, 16}, {0, 0, 0, 1, 1}};
    AscendC::LocalTensor<float> t(AscendC::TPosition::VECIN, 0, 16);
    AscendC::DataCopy(t, xg, dst, src, 2);
    AscendC::SetFlag<AscendC::HardEvent::MTE2_MTE3>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE2_MTE3>(EVENT_ID0);
    AscendC::DataCopy(zg, t, dst, dst, 2);
}
"""


def test_twin_constant_sizes_an_array_of_braced_structs_and_a_local_tensor_keeps_its_type(tmp_path):
    x = np.arange(64, dtype=np.float32)
    z, _acl = run_kernel(tmp_path, SLICES, x, np.float32, 16)
    np.testing.assert_array_equal(z, x.reshape(2, 32)[1, 8:24])  # 16 floats: the tensor is float


POOL = """
class Pool {
public:
    __aicore__ inline Pool() { Init(); }
    template <class T>
    __aicore__ inline void PlaceQue(T& que, uint8_t num, uint32_t len)
    {
        auto h = this->GetBufHandle(this->GetCurBufSize());
        auto addr = this->GetCurAddr();
        que.InitStartBufHandle(h, num, len);
        for (uint32_t i = 0; i < num; i++) {
            que.InitBufHandle(this, i, h, addr + i * len, len);
        }
        this->SetCurAddr(addr + num * len);
        this->SetCurBufSize(this->GetCurBufSize() + num);
    }
    template <AscendC::TPosition pos>
    __aicore__ inline void PlaceBuf(AscendC::TBuf<pos>& buf, uint32_t len)
    {
        auto h = this->GetBufHandle(this->GetCurBufSize());
        auto addr = this->GetCurAddr();
        buf.InitStartBufHandle(h, 1, len);
        buf.InitBufHandle(this, 0, h, addr, len);
        this->SetCurAddr(addr + len);
        this->SetCurBufSize(this->GetCurBufSize() + 1);
    }
    EXTERN_IMPL_BUFPOOL(Pool, AscendC::TPosition::VECCALC, 4);
};

__global__ __vector__ void k(GM_ADDR x, GM_ADDR z)
{
    AscendC::GlobalTensor<float> xg, zg;
    xg.SetGlobalBuffer((__gm__ float*)x);
    zg.SetGlobalBuffer((__gm__ float*)z);
    AscendC::TPipe pipe;
    Pool pool;
    AscendC::TQue<AscendC::TPosition::VECIN, 1> q;
    AscendC::TBuf<AscendC::TPosition::VECCALC> b;
    pipe.InitBufPool(pool, POOL_BYTES);
    pool.PlaceQue(q, 1, 256);
    pool.PlaceBuf(b, 256);
    AscendC::LocalTensor<float> t = q.AllocTensor<float>();
    AscendC::DataCopy(t, xg, 64);
    q.EnQue(t);
    t = q.DeQue<float>();
    AscendC::LocalTensor<float> o = b.Get<float>();
    AscendC::Adds(o, t, 1.0f, 64);
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::DataCopy(zg, o, 64);
    q.FreeTensor(t);
}
"""


def test_a_custom_buffer_pool_places_a_queue_and_a_buffer_where_it_says(tmp_path):
    x = np.arange(64, dtype=np.float32)
    z, acl = run_kernel(tmp_path, POOL.replace("POOL_BYTES", "512"), x, np.float32, 64)
    np.testing.assert_array_equal(z, x + 1)
    assert acl.launches[0].result.kernel_cycles > 0


def test_a_buffer_placed_outside_its_custom_pool_names_the_line(tmp_path):
    with pytest.raises(KernelError) as e:
        run_kernel(tmp_path, POOL.replace("POOL_BYTES", "256"), np.zeros(64, np.float32), np.float32, 64)
    assert "outside the pool [0, 256)" in e.value.message
    assert e.value.line == line_of(tmp_path / "k.asc", "buf.InitBufHandle(this")


SCENARIOS = """
template <uint32_t n>
struct Cfg {
    static constexpr uint32_t N = n;
};
template <uint32_t s>
struct Scenario;
template <>
struct Scenario<1> : Cfg<64> {};
template <>
struct Scenario<2> : Cfg<128> {};
using Current = Scenario<2>;
constexpr uint32_t COUNT = Current::N;

template <uint32_t n>
__global__ __vector__ void k(GM_ADDR x, GM_ADDR z)
{
    AscendC::GlobalTensor<float> xg, zg;
    xg.SetGlobalBuffer((__gm__ float*)x);
    zg.SetGlobalBuffer((__gm__ float*)z);
    AscendC::LocalTensor<float> t(AscendC::TPosition::VECIN, 0, n);
    AscendC::DataCopy(t, xg, n);
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::DataCopy(zg, t, n);
}
"""


def test_host_code_reads_a_constant_defined_through_a_class_template_alias(tmp_path):
    x = np.arange(128, dtype=np.float32)
    z, _acl = run_kernel(tmp_path, SCENARIOS, x, np.float32, 128, launch="k<COUNT>")
    np.testing.assert_array_equal(z, x)


LOOP = """
__global__ __vector__ void k(GM_ADDR x, GM_ADDR z)
{
    AscendC::GlobalTensor<half> xg;
    AscendC::GlobalTensor<float> zg;
    xg.SetGlobalBuffer((__gm__ half*)x);
    zg.SetGlobalBuffer((__gm__ float*)z);
    AscendC::LocalTensor<half> a(AscendC::TPosition::VECIN, 0, 256);
    AscendC::LocalTensor<float> c(AscendC::TPosition::VECOUT, 1024, 256);
    AscendC::DataCopy(a, xg, 256);
    AscendC::SetFlag<AscendC::HardEvent::MTE2_S>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE2_S>(EVENT_ID0);
    float scale = 0.5f;
    for (uint32_t i = 0; i < 256; i++) {
        float v = (float)a.GetValue(i);
        c.SetValue(i, v * scale - (float)i / 3.0f);
    }
    AscendC::SetFlag<AscendC::HardEvent::S_MTE3>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::S_MTE3>(EVENT_ID0);
    AscendC::DataCopy(zg, c, 256);
}
"""


def test_an_element_wise_scalar_loop_runs_as_arrays_with_the_numbers_and_time_of_the_loop(
    tmp_path, monkeypatch
):
    x = np.random.default_rng(3).uniform(-4, 4, 256).astype(np.float16)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    fast, acl_fast = run_kernel(tmp_path / "a", LOOP, x, np.float32, 256)
    monkeypatch.setattr(vloop, "MIN_ELEMENTS", 1 << 30)  # the per-element loop
    slow, acl_slow = run_kernel(tmp_path / "b", LOOP, x, np.float32, 256)
    i = np.arange(256, dtype=np.float32)
    want = (x.astype(np.float32) * np.float32(0.5)) - (i.astype(np.float64) / 3.0).astype(np.float32)
    np.testing.assert_array_equal(slow, fast)
    np.testing.assert_array_equal(fast, want.astype(np.float32))
    r_fast, r_slow = acl_fast.launches[0].result, acl_slow.launches[0].result
    assert r_fast.kernel_cycles == pytest.approx(r_slow.kernel_cycles, rel=1e-12)  # 256 Get + 256 Set


SHIFTED = """
__global__ __vector__ void k(GM_ADDR x, GM_ADDR z)
{
    AscendC::GlobalTensor<float> xg, zg;
    xg.SetGlobalBuffer((__gm__ float*)x);
    zg.SetGlobalBuffer((__gm__ float*)z);
    AscendC::LocalTensor<float> a(AscendC::TPosition::VECIN, 0, 128);
    AscendC::LocalTensor<float> b(AscendC::TPosition::VECIN, 32, 120);
    AscendC::DataCopy(a, xg, 128);
    AscendC::SetFlag<AscendC::HardEvent::MTE2_S>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE2_S>(EVENT_ID0);
    for (uint32_t i = 0; i < 120; i++) {
        b.SetValue(i, a.GetValue(i) + 1.0f);
    }
    AscendC::SetFlag<AscendC::HardEvent::S_MTE3>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::S_MTE3>(EVENT_ID0);
    AscendC::DataCopy(zg, a, 128);
}
"""


def test_a_loop_writing_a_tensor_that_overlaps_its_input_keeps_the_per_element_order(tmp_path):
    z, _acl = run_kernel(tmp_path, SHIFTED, np.full(128, 5, np.float32), np.float32, 128)
    # b starts 8 floats into a (addresses are 32 B aligned): each element reads the write 8 back
    np.testing.assert_array_equal(z, 5 + np.arange(128, dtype=np.float32) // 8)


def test_cmake_definitions_follow_the_if_branch_their_variables_select(tmp_path):
    (tmp_path / "CMakeLists.txt").write_text(
        'set(MODE "UB" CACHE STRING "where")\nset(SCENARIO_NUM 3)\n'
        'if(MODE STREQUAL "UB")\n  target_compile_definitions(demo PRIVATE TO_UB=1)\n'
        'elseif(MODE STREQUAL "L1")\n  target_compile_definitions(demo PRIVATE TO_L1=1)\nendif()\n'
        "if(NOT SCENARIO_NUM EQUAL 3)\n  add_definitions(-DODD)\nelse()\n  add_definitions(-DTHREE)\nendif()\n"
        "target_compile_definitions(demo PRIVATE\n    SCENARIO_NUM=${SCENARIO_NUM}\n)\n"
    )
    cm = tmp_path / "CMakeLists.txt"
    assert cmake_defines(cm, tmp_path) == {"TO_UB": "1", "THREE": "1", "SCENARIO_NUM": "3"}
    assert cmake_defines(cm, tmp_path, {"MODE": "L1", "SCENARIO_NUM": "2"}) == {
        "TO_L1": "1",
        "ODD": "1",
        "SCENARIO_NUM": "2",
    }


def test_data_copy_pad_params_is_the_padding_struct():
    p = AscendC.DataCopyPadParams(False, 1, 2, 0)
    assert (p.isPad, p.leftPadding, p.rightPadding, p.paddingValue) == (False, 1, 2, 0)


def test_a_vector_kernel_has_all_of_ub_only_mix_kernels_lose_the_reserved_256_bytes(tmp_path):
    from asc_tui.npu.chip import load_chip

    chip = load_chip("ascend910b")
    assert chip.usable["ub"] == 196352 and chip.single_unit.usable["ub"] == 196608
    x = np.arange(64, dtype=np.float32)
    z, _acl = run_kernel(tmp_path, POOL.replace("POOL_BYTES", "196608"), x, np.float32, 64)
    np.testing.assert_array_equal(z, x + 1)


LIST = """
__global__ __vector__ void k(GM_ADDR list, GM_ADDR z)
{
    AscendC::ListTensorDesc l((__gm__ void*)list);
    AscendC::TensorDesc<float> d;
    uint64_t shape[2];
    d.SetShapeAddr(shape);
    l.GetDesc(d, 1);
    uint32_t n = shape[0] * d.GetShape(1) * (l.GetSize() - 1);
    AscendC::GlobalTensor<float> a, b, out;
    a.SetGlobalBuffer((__gm__ float*)l.GetDataPtr<__gm__ uint8_t>(PICK), n);
    b.SetGlobalBuffer((__gm__ float*)d.GetDataPtr(), n);
    out.SetGlobalBuffer((__gm__ float*)z, n);
    AscendC::LocalTensor<float> ta(AscendC::TPosition::VECIN, 0, 64);
    AscendC::LocalTensor<float> tb(AscendC::TPosition::VECIN, 256, 64);
    AscendC::DataCopy(ta, a, n);
    AscendC::DataCopy(tb, b, n);
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::Sub(ta, ta, tb, n);
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::DataCopy(out, ta, n);
}
"""
LIST_MAIN = """
int32_t main(int32_t argc, char* argv[])
{
    uint8_t *xh = nullptr, *zh = nullptr, *xd = nullptr, *yd = nullptr, *zd = nullptr, *ld = nullptr;
    aclInit(nullptr);
    aclrtSetDevice(0);
    aclrtStream stream = nullptr;
    aclrtCreateStream(&stream);
    aclrtMallocHost((void**)(&xh), IN_BYTES);
    aclrtMallocHost((void**)(&zh), OUT_BYTES);
    aclrtMalloc((void**)&xd, OUT_BYTES, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc((void**)&yd, OUT_BYTES, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc((void**)&zd, OUT_BYTES, ACL_MEM_MALLOC_HUGE_FIRST);
    ReadFile("./input/x.bin", IN_BYTES, xh, IN_BYTES);
    aclrtMemcpy(xd, OUT_BYTES, xh, OUT_BYTES, ACL_MEMCPY_HOST_TO_DEVICE);
    aclrtMemcpy(yd, OUT_BYTES, xh + OUT_BYTES, OUT_BYTES, ACL_MEMCPY_HOST_TO_DEVICE);
    constexpr uint32_t DIMS = 2;
    struct Desc {
        uint32_t dim{DIMS};
        uint32_t index;
        uint64_t shape[DIMS] = {8, 8};
    };
    Desc a;
    a.index = 0;
    Desc b;
    b.index = 1;
    struct List {
        uint64_t ptrOffset;
        Desc desc[2];
        uintptr_t data[2];
    } list;
    list = {(1 + (1 + DIMS) * 2) * sizeof(uint64_t), {a, b}, {(uintptr_t)xd, (uintptr_t)yd}};
    printf("sizeof(List) = %u\\n", (uint32_t)sizeof(List));
    aclrtMalloc((void**)&ld, sizeof(List), ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMemcpy(ld, sizeof(List), &list, sizeof(List), ACL_MEMCPY_HOST_TO_DEVICE);
    LAUNCH<<<BLOCKS, nullptr, stream>>>(ld, zd);
    aclrtSynchronizeStream(stream);
    aclrtMemcpy(zh, OUT_BYTES, zd, OUT_BYTES, ACL_MEMCPY_DEVICE_TO_HOST);
    WriteFile("./output/z.bin", zh, OUT_BYTES);
    return 0;
}
"""


def test_a_list_of_tensors_built_as_a_host_struct_reaches_the_kernel_through_list_tensor_desc(tmp_path):
    x = np.random.default_rng(5).uniform(-1, 1, 128).astype(np.float32)
    z, acl = run_kernel(tmp_path, LIST.replace("PICK", "0"), x, np.float32, 64, main=LIST_MAIN)
    assert "sizeof(List) = 72" in acl.out.getvalue()  # 8 + 2 x (4 + 4 + 2 x 8) + 2 x 8, C layout
    np.testing.assert_array_equal(z, x[:64] - x[64:])


def test_a_list_tensor_desc_index_past_its_tensors_names_the_line(tmp_path):
    with pytest.raises(KernelError) as e:
        run_kernel(
            tmp_path, LIST.replace("PICK", "2"), np.zeros(128, np.float32), np.float32, 64, main=LIST_MAIN
        )
    assert "ListTensorDesc index 2 outside its 2 tensors" in e.value.message
    assert e.value.line == line_of(tmp_path / "k.asc", "GetDataPtr<__gm__ uint8_t>(2)")


def test_the_array_form_reports_an_uninitialised_read_at_the_getvalue_line_as_the_loop_does(
    tmp_path, monkeypatch
):
    from asc_tui.devkit.debug.sanitizer import Sanitizer

    src = LOOP.replace("AscendC::DataCopy(a, xg, 256);", "")  # `a` is never written
    found = []
    for i, least in enumerate((vloop.MIN_ELEMENTS, 1 << 30)):  # array form, then per element
        monkeypatch.setattr(vloop, "MIN_ELEMENTS", least)
        san = Sanitizer()
        (tmp_path / str(i)).mkdir()
        run_kernel(tmp_path / str(i), src, np.ones(256, np.float16), np.float32, 256, sanitizer=san)
        found.append({(f.tool, f.kind, f.line) for f in san.findings()})
    line = line_of(tmp_path / "0" / "k.asc", "a.GetValue(i)")
    assert found[0] == found[1] == {("initcheck", "uninitialized", line)}
