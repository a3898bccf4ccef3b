"""Compare output.bin with golden.bin (float32): exit 0 and 'test pass!' when they agree."""

import sys

import numpy as np

out = np.fromfile(sys.argv[1], dtype=np.float32)
gold = np.fromfile(sys.argv[2], dtype=np.float32)
if out.shape == gold.shape and np.allclose(out, gold, rtol=1e-5, atol=1e-6):
    print("test pass!")
    sys.exit(0)
print(f"mismatch: {int(np.sum(~np.isclose(out, gold)))} elements")
sys.exit(1)
