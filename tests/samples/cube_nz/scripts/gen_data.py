"""Inputs and goldens of the cube_nz test sample: C = A·B in NZ order (column blocks of 16, each
M rows), the int4 packing of round(x) and the bits of 0.5f."""

import os

import numpy as np

M, K, N = 32, 64, 48
rng = np.random.default_rng(11)
a = rng.integers(-4, 5, (M, K)).astype(np.float16)
b = rng.integers(-4, 5, (K, N)).astype(np.float16)
x = rng.uniform(-10, 10, 256).astype(np.float16)
os.makedirs("input", exist_ok=True)
os.makedirs("output", exist_ok=True)
a.tofile("input/a.bin")
b.tofile("input/b.bin")
x.tofile("input/x.bin")
c = a.astype(np.float32) @ b.astype(np.float32)
c.reshape(M, N // 16, 16).transpose(1, 0, 2).astype(np.float32).tofile("output/golden.bin")
q = np.clip(np.rint(x.astype(np.float64)), -8, 7).astype(np.int64) & 0xF
(q[0::2] | (q[1::2] << 4)).astype(np.uint8).tofile("output/packed_golden.bin")
