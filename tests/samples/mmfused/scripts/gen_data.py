"""Inputs and golden for the mmfused test sample: C = relu(A·B), A 64 × 80, B 80 × 96 (half).

Small integers: A·B is exact in float32, so the check can be exact."""

import os

import numpy as np

rng = np.random.default_rng(5)
a = rng.integers(-3, 4, (64, 80)).astype(np.float16)
b = rng.integers(-3, 4, (80, 96)).astype(np.float16)
c = np.maximum(a.astype(np.float32) @ b.astype(np.float32), 0)
os.makedirs("input", exist_ok=True)
os.makedirs("output", exist_ok=True)
a.tofile("input/a.bin")
b.tofile("input/b.bin")
c.astype(np.float32).tofile("output/golden.bin")
