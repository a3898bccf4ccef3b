"""Check output.bin against golden.bin: C = relu(A·B) of small integers is exact, never negative."""

import sys

import numpy as np

got, want = (np.fromfile(p, dtype=np.float32) for p in sys.argv[1:3])
if got.shape != want.shape or (got < 0).any():
    print("wrong size, or negative values after Relu")
    sys.exit(1)
wrong = int(np.count_nonzero(got != want))
print("test pass!" if wrong == 0 else f"{wrong} of {got.size} elements differ")
sys.exit(1 if wrong else 0)
