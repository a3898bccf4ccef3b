"""Check output.bin against golden.bin: the inputs are small integers, so C1 and C2 are exact."""

import sys

import numpy as np

got, want = (np.fromfile(p, dtype=np.float32) for p in sys.argv[1:3])
bad = np.flatnonzero(got != want) if got.shape == want.shape else [0]
if len(bad) == 0:
    print("test pass!")
else:
    print(f"{len(bad)} elements differ, the first at {bad[0]}")
sys.exit(1 if len(bad) else 0)
