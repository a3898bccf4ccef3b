"""Check the NZ matmul output, the int4 packing and the float bits; 'test pass!' on success."""

import os
import sys

import numpy as np

out = np.fromfile(sys.argv[1], dtype=np.float32)
gold = np.fromfile(sys.argv[2], dtype=np.float32)
d = os.path.dirname(sys.argv[1])
packed = np.fromfile(os.path.join(d, "packed.bin"), dtype=np.uint8)
packed_gold = np.fromfile(os.path.join(d, "packed_golden.bin"), dtype=np.uint8)
bits = np.fromfile(os.path.join(d, "bits.bin"), dtype=np.int32)
ok = out.shape == gold.shape and np.array_equal(out, gold)
ok = ok and np.array_equal(packed, packed_gold) and bits[0] == 0x3F000000
print("test pass!" if ok else "mismatch")
sys.exit(0 if ok else 1)
