"""Inputs and golden for the mmhigh test sample: C1 = A1·B1 + bias, then C2 = 0.5·(A2·B2).

Small integers in half: every product and sum is exact in float32, whatever the order."""

import os

import numpy as np

rng = np.random.default_rng(11)
a1 = rng.integers(-4, 5, (384, 96)).astype(np.float16)
b1 = rng.integers(-4, 5, (96, 320)).astype(np.float16)
bias1 = rng.integers(-8, 9, 320).astype(np.float32)
a2 = rng.integers(-4, 5, (256, 64)).astype(np.float16)
b2 = rng.integers(-4, 5, (64, 128)).astype(np.float16)
c1 = a1.astype(np.float32) @ b1.astype(np.float32) + bias1
c2 = 0.5 * (a2.astype(np.float32) @ b2.astype(np.float32))
os.makedirs("input", exist_ok=True)
os.makedirs("output", exist_ok=True)
for name, arr in (("a1", a1), ("b1", b1), ("bias1", bias1), ("a2", a2), ("b2", b2)):
    arr.tofile(f"input/{name}.bin")
np.concatenate([c1.ravel(), c2.ravel()]).astype(np.float32).tofile("output/golden.bin")
