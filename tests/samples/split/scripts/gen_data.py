"""Inputs and golden (x - y) for the split-layout test sample."""

import os

import numpy as np

x = np.arange(512, dtype=np.float32)
y = np.full(512, 0.5, dtype=np.float32)
os.makedirs("input", exist_ok=True)
os.makedirs("output", exist_ok=True)
x.tofile("input/x.bin")
y.tofile("input/y.bin")
(x - y).tofile("output/golden.bin")
