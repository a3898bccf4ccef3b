"""Local memory management: TPipe, TQue, TBuf, buffer pools, and the tensors over them."""
