"""blocksum: every element must equal the golden exactly (the sums run in a fixed order)."""

import sys

import numpy as np

got, want = (np.fromfile(p, dtype=np.float32) for p in sys.argv[1:3])
bad = got.shape != want.shape or not np.array_equal(got, want)
print("[ERROR] result error" if bad else "test pass!")
sys.exit(1 if bad else 0)
