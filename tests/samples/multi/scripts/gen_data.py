"""Input x and golden 4x for the two-launch test sample."""

import os

import numpy as np

x = np.linspace(-1, 1, 2048, dtype=np.float32)
os.makedirs("input", exist_ok=True)
os.makedirs("output", exist_ok=True)
x.tofile("input/input_x.bin")
(4 * x).astype(np.float32).tofile("output/golden.bin")
