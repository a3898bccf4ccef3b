"""The emulated NPU: chip models, per-core instruction timing, multi-core launch."""
