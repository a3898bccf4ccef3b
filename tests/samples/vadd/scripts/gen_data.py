"""Inputs and golden for the vadd test sample (written to ./input and ./output of the cwd)."""

import os

import numpy as np

rng = np.random.default_rng(7)
x = rng.uniform(-2, 2, 4096).astype(np.float32)
y = rng.uniform(-2, 2, 4096).astype(np.float32)
os.makedirs("input", exist_ok=True)
os.makedirs("output", exist_ok=True)
x.tofile("input/input_x.bin")
y.tofile("input/input_y.bin")
(x + y).tofile("output/golden.bin")
