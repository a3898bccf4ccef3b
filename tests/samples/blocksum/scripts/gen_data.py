"""Inputs and golden for the blocksum test sample (written to ./input and ./output of the cwd)."""

import os

import numpy as np

x = np.random.default_rng(11).uniform(-2, 2, (4, 64)).astype(np.float32)
total = (2 * x).sum(axis=0, dtype=np.float32)
os.makedirs("input", exist_ok=True)
os.makedirs("output", exist_ok=True)
x.tofile("input/input_x.bin")
np.tile(total, 5).astype(np.float32).tofile("output/golden.bin")
