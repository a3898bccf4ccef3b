"""The high-level Matmul object and its host tiling (matmul_tiling)."""
