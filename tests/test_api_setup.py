"""Kernel set-up and utilities the samples use: InitSocState, LocalMemAllocator, the templated
event and barrier spellings, and the small helpers (DivCeil, IsSameType, GetSystemCycle...)."""

from __future__ import annotations

import numpy as np
import pytest
from apikit import load, run, store, ub

from asc_tui import ascendc as AscendC
from asc_tui.ascendc import Hardware, LocalMemAllocator, half, int32
from asc_tui.npu.errors import KernelError


def test_local_mem_allocator_hands_out_consecutive_aligned_buffers():
    seen = []

    def body():
        alloc = LocalMemAllocator(Hardware.UB)
        a = alloc.Alloc(half, 100)  # 200 B, rounded up to 224
        b = alloc.Alloc(int32, 8)
        seen.extend([(a.GetPhyAddr(), a.GetSize()), (b.GetPhyAddr(), b.GetSize())])

    run(body)
    assert seen == [(0, 100), (224, 8)]


def test_local_mem_allocator_counts_against_the_ub_capacity():
    def body():
        LocalMemAllocator(Hardware.UB).Alloc(half, 200 * 1024)

    with pytest.raises(KernelError, match="UB"):
        run(body)


def test_templated_event_and_barrier_spellings_order_the_pipes_alike():
    def kernel(subscripted):
        def body(x, o):
            (t,) = ub((half, 128))
            g = AscendC.GlobalTensor(half)
            g.SetGlobalBuffer(x)
            AscendC.DataCopy(t, g, 128)
            if subscripted:
                AscendC.SetFlag[AscendC.HardEvent.MTE2_V](AscendC.EVENT_ID0)
                AscendC.WaitFlag[AscendC.HardEvent.MTE2_V](AscendC.EVENT_ID0)
            else:
                AscendC.SetFlag(AscendC.HardEvent.MTE2_V, AscendC.EVENT_ID0)
                AscendC.WaitFlag(AscendC.HardEvent.MTE2_V, AscendC.EVENT_ID0)
            AscendC.Muls(t, t, 2.0, 128)
            (
                AscendC.PipeBarrier[AscendC.PIPE_ALL]()
                if subscripted
                else AscendC.PipeBarrier(AscendC.PIPE_ALL)
            )
            store(o, t)

        return body

    x = np.ones(128, np.float16)
    a = run(kernel(True), x, out_a := np.zeros(128, np.float16))
    b = run(kernel(False), x, out_b := np.zeros(128, np.float16))
    assert a.kernel_cycles == b.kernel_cycles and (out_a == 2).all() and (out_b == 2).all()


def test_init_soc_state_resets_the_vector_mask():
    a = np.ones(128, np.float16)
    out = np.zeros(128, np.float16)

    def body(x, o):
        ta, to = ub((half, 128), (half, 128))
        load(ta, x)
        AscendC.SetMaskCount()
        AscendC.SetVectorMask(0, 3)
        AscendC.InitSocState()
        AscendC.Adds(to, ta, 1.0, AscendC.MASK_PLACEHOLDER, 1, AscendC.UnaryRepeatParams())
        store(o, to)

    run(body, a, out)
    assert (out == 2).all()  # normal mode, every lane on


def test_small_helpers_follow_their_cxx_meaning():
    assert AscendC.DivCeil(10, 4) == 3 and AscendC.DivCeil(8, 4) == 2
    assert AscendC.IsSameType(half, AscendC.float16) and not AscendC.IsSameType(half, AscendC.float)
    assert AscendC.ONE_BLK_SIZE == 32


def test_get_system_cycle_advances_with_the_work_issued():
    seen = []

    def body(x):
        (t,) = ub((half, 4096))
        start = AscendC.GetSystemCycle()
        load(t, x)
        AscendC.Exp(t, t, 4096)
        AscendC.PipeBarrier(AscendC.PIPE_ALL)
        seen.append(AscendC.GetSystemCycle() - start)

    run(body, np.zeros(4096, np.float16))
    assert seen[0] > 100


def test_data_sync_barrier_and_sync_all_drain_the_pipes():
    def body(x):
        (t,) = ub((half, 4096))
        load(t, x)
        AscendC.Exp(t, t, 4096)
        AscendC.DataSyncBarrier(AscendC.MemDsbT.ALL)
        AscendC.SyncAll()

    em = run(body, np.zeros(4096, np.float16))
    assert em.kernel_cycles > 0


def test_set_pad_value_fills_the_block_tail_when_is_pad_is_off():
    x = np.arange(1, 21, dtype=np.float16)
    out = np.zeros(32, np.float16)

    def body(gx, go):
        (t,) = ub((half, 32))
        g = AscendC.GlobalTensor(half)
        g.SetGlobalBuffer(gx)
        AscendC.SetPadValue(half.type(1))
        AscendC.DataCopyPad(
            t, g, AscendC.DataCopyExtParams(1, 20 * 2, 0, 0, 0), AscendC.DataCopyPadExtParams(False, 0, 12, 0)
        )
        AscendC.SetFlag(AscendC.HardEvent.MTE2_V, 0)
        AscendC.WaitFlag(AscendC.HardEvent.MTE2_V, 0)
        store(go, t)

    run(body, x, out)
    np.testing.assert_array_equal(out, np.concatenate([x, np.ones(12, np.float16)]))


def test_tbufpool_places_buffers_in_its_region_and_reset_reuses_it():
    seen = []

    def body():
        pipe = AscendC.TPipe()
        first = AscendC.TBuf(AscendC.TPosition.VECCALC)
        pipe.InitBuffer(first, 64)
        pool, sub = AscendC.TBufPool(AscendC.TPosition.VECCALC), AscendC.TBufPool(AscendC.TPosition.VECCALC)
        pipe.InitBufPool(pool, 1024)
        pool.InitBufPool(sub, 256)
        q = AscendC.TQue(AscendC.TPosition.VECIN, 1)
        pool.InitBuffer(q, 1, 512)
        b = AscendC.TBuf(AscendC.TPosition.VECCALC)
        sub.InitBuffer(b, 128)
        seen.append((q.AllocTensor(half).GetPhyAddr(), b.Get(half).GetPhyAddr()))
        pool.Reset()
        again = AscendC.TBuf(AscendC.TPosition.VECCALC)
        pool.InitBuffer(again, 32)
        seen.append(again.Get(half).GetPhyAddr())
        with pytest.raises(KernelError, match="pool"):
            sub.InitBuffer(AscendC.TBuf(AscendC.TPosition.VECCALC), 512)

    run(body)
    assert seen == [(64 + 256, 64), 64]


def test_get_tpipe_ptr_fetches_distinct_event_ids_until_they_run_out():
    ids = []

    def body():
        AscendC.TPipe()
        LocalMemAllocator(Hardware.UB).Alloc(half, 16)  # its private pipe is not the user's
        pipe = AscendC.GetTPipePtr()
        ids.extend(pipe.FetchEventID(AscendC.HardEvent.MTE2_S) for _ in range(3))
        pipe.ReleaseEventID(AscendC.HardEvent.MTE2_S, ids[1])
        ids.append(pipe.FetchEventID(AscendC.HardEvent.MTE2_S))
        for _ in range(5):
            pipe.FetchEventID(AscendC.HardEvent.MTE2_S)
        pipe.FetchEventID(AscendC.HardEvent.MTE2_S)

    with pytest.raises(KernelError, match="event ids"):
        run(body)
    assert ids == [0, 1, 2, 1]


def test_gm_bypass_reads_see_what_an_earlier_block_wrote():
    src = np.zeros(8, np.int32)
    dst = np.zeros(8, np.int32)

    def body(s, d):
        g = AscendC.GlobalTensor(int32)
        g.SetGlobalBuffer(s)
        if AscendC.GetBlockIdx() == 0:
            AscendC.WriteGmByPassDCache(int32, s + 1, 7)
            AscendC.DataSyncBarrier(AscendC.MemDsbT.DDR)
            AscendC.WriteGmByPassDCache(int32, s, 6)
        else:
            while AscendC.ReadGmByPassDCache(int32, g) != 6:
                pass
            AscendC.WriteGmByPassDCache(int32, d, 2 * AscendC.ReadGmByPassDCache(int32, s + 1))

    run(body, src, dst, block_dim=2)
    assert dst[0] == 14 and list(src[:2]) == [6, 7]


def test_data_copy_slices_pick_the_bursts_of_the_sample():
    x = np.random.default_rng(0).random((3, 87)).astype(np.float32)
    out = np.zeros((2, 48), np.float32)

    def body(go, gx):
        src_info = [AscendC.SliceInfo(16, 70, 7, 3, 87), AscendC.SliceInfo(0, 2, 1, 1, 3)]
        dst_info = [AscendC.SliceInfo(0, 47, 0, 3, 48), AscendC.SliceInfo(0, 1, 0, 1, 2)]
        (t,) = ub((AscendC.float32, 96))
        g, o = AscendC.GlobalTensor(AscendC.float32), AscendC.GlobalTensor(AscendC.float32)
        g.SetGlobalBuffer(gx)
        o.SetGlobalBuffer(go)
        AscendC.DataCopy(t, g, dst_info, src_info, 2)
        AscendC.SetFlag(AscendC.HardEvent.MTE2_MTE3, 0)
        AscendC.WaitFlag(AscendC.HardEvent.MTE2_MTE3, 0)
        AscendC.DataCopy(o, t, dst_info, dst_info, 2)

    run(body, out, x)
    want = np.concatenate([x[[0, 2], 16:40], x[[0, 2], 47:71]], axis=1)
    np.testing.assert_array_equal(out, want)


def test_local_tensor_at_an_address_as_in_the_copy_samples():
    x = np.arange(64, dtype=np.int32)
    out = np.zeros(64, np.int32)

    def body(gx, go):
        src = AscendC.LocalTensor(int32, AscendC.TPosition.VECIN, 0, 64)
        dst = AscendC.LocalTensor(int32, AscendC.TPosition.VECOUT, 256, 64)
        load(src, gx)
        AscendC.Copy(dst, src, 64, 1, (1, 1, 8, 8))
        store(go, dst)
        assert dst.GetPhyAddr() == 256

    run(body, x, out)
    np.testing.assert_array_equal(out, x)
