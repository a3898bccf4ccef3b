"""`ListTensorDesc` / `TensorDesc<T>`: a list of GM tensors a kernel receives as one GM argument.

The argument points at uint64 words the host wrote: `[ptrOffset]`, then per tensor a
`dim | index << 32` word and its `dim` shape words, then (at byte `ptrOffset`) one data pointer
per tensor. `ListTensorDesc(data)` decodes the head (the count is the first word's index, else
the last descriptor's index + 1), `GetDataPtr<T>(i)` reads pointer i, `GetDesc(desc, i)` fills a
TensorDesc (dim, index, shape, data pointer). A data pointer is a device address the host took
(`(uintptr_t)p`); it maps back to its GM buffer (`npu.gm.gm_at`). Every word read is a scalar GM
load (`scalar_gm_value` cycles); reads outside the argument, a bad index or an address that is
no GM buffer are errors at the user's line.
"""

from __future__ import annotations

import sys

import numpy as np

from ...npu import state
from ...npu.errors import KernelError
from ...npu.memory.gm import GM_ADDR, gm_at
from ...npu.numbers.offload import gm_ready
from ..dtypes import as_dtype
from .tensors import GlobalTensor

_ALL = 0xFFFFFFFF


def _fail(message: str, fr):
    raise KernelError(message, fr.f_code.co_filename, fr.f_lineno)


class TensorDesc:
    """One tensor of a ListTensorDesc: dim, index, shape and data pointer (`GetDesc` fills it)."""

    def __init__(self, dtype=None):
        self.dtype = as_dtype(dtype) if dtype is not None else None
        self.dim = 0
        self.index = 0
        self.shape: list[int] = []
        self.ptr: GM_ADDR | None = None

    def SetShapeAddr(self, shape) -> None:
        self.shape = shape if isinstance(shape, list) else list(shape)

    def GetDim(self) -> int:
        return self.dim

    def GetIndex(self) -> int:
        return self.index

    def GetShape(self, i: int) -> int:
        if not 0 <= int(i) < self.dim:
            _fail(f"TensorDesc.GetShape({int(i)}): the tensor has {self.dim} dimensions", sys._getframe(1))
        return int(self.shape[int(i)])

    def GetDataPtr(self) -> GM_ADDR | None:
        return self.ptr

    def GetDataObj(self) -> GlobalTensor:
        t = GlobalTensor(self.dtype or np.dtype(np.uint8))
        n = 1
        for s in self.shape[: self.dim]:
            n *= int(s)
        t.SetGlobalBuffer(self.ptr, n)
        return t


class ListTensorDesc:
    def __init__(self, data: GM_ADDR | None = None, length: int = _ALL, shapeSize: int = _ALL):
        self.count = 0
        if data is not None:
            self._decode(data, int(length), int(shapeSize), sys._getframe(1))

    def Init(self, data: GM_ADDR, length: int = _ALL, shapeSize: int = _ALL) -> None:
        self._decode(data, int(length), int(shapeSize), sys._getframe(1))

    def _word(self, i: int, fr) -> int:
        """uint64 word `i` of the list (a scalar GM load)."""
        core = state.core
        core.scalar(core.chip.scalar_gm_value, "ListTensorDesc", fr)
        b = self.base + 8 * i
        if b < 0 or b + 8 > self.nbytes:
            _fail(f"ListTensorDesc reads word {i}, past the end of its argument ({self.nbytes} B)", fr)
        return int(self.raw[b : b + 8].view(np.uint64)[0])

    def _decode(self, data, length: int, shape_size: int, fr) -> None:
        if not isinstance(data, GM_ADDR):
            _fail(f"ListTensorDesc expects a GM address, got {type(data).__name__}", fr)
        buf = data.buffer
        if buf.data is None:
            _fail("ListTensorDesc reads the host's descriptor: it needs a full (numeric) run", fr)
        gm_ready(buf)
        self.raw = buf.data.view(np.uint8)
        self.base = int(data.offset) * buf.dtype.itemsize
        self.nbytes = len(self.raw)
        ptr_offset = self._word(0, fr)
        head = self._word(1, fr)
        self.dim, index = head & _ALL, head >> 32
        self.desc_words = 2 if self.dim == 0 else 1 + self.dim
        self.ptr_word = ptr_offset // 8
        self.count = index if index else (self._word(self.ptr_word - self.desc_words, fr) >> 32) + 1
        if self.dim and self.count != (ptr_offset - 8) // (self.desc_words * 8):
            _fail(
                f"ListTensorDesc: {self.count} tensors of {self.dim} dimensions do not fit a pointer "
                f"offset of {ptr_offset} B",
                fr,
            )
        if (
            length != _ALL
            and shape_size != _ALL
            and (self.count != shape_size or length != ptr_offset + 8 * self.count)
        ):
            _fail(f"ListTensorDesc: length {length} / shapeSize {shape_size} disagree with the list", fr)

    def GetSize(self) -> int:
        return self.count

    def _pointer(self, index: int, fr) -> GM_ADDR:
        if not 0 <= int(index) < self.count:
            _fail(f"ListTensorDesc index {int(index)} outside its {self.count} tensors", fr)
        addr = self._word(self.ptr_word + int(index), fr)
        at = gm_at(addr)
        if at is None:
            _fail(f"ListTensorDesc pointer {int(index)} ({addr:#x}) is no device buffer", fr)
        return at

    def GetDataPtr(self, dtype, index: int) -> GM_ADDR:
        """`GetDataPtr<T>(i)`: the GM address of tensor i."""
        return self._pointer(index, sys._getframe(1))

    def GetDesc(self, desc: TensorDesc, index: int) -> None:
        fr = sys._getframe(1)
        if self.dim == 0:
            _fail("ListTensorDesc.GetDesc on a list without shapes (dim 0)", fr)
        desc.ptr = self._pointer(index, fr)
        desc.dim, desc.index = self.dim, int(index)
        first = 1 + int(index) * self.desc_words
        shape = [self._word(first + 1 + k, fr) for k in range(self.dim)]
        if len(desc.shape) >= self.dim:  # the array SetShapeAddr gave: written in place, as in C
            desc.shape[: self.dim] = shape
        else:
            desc.shape = shape
