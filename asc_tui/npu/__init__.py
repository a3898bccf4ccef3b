"""The emulated NPU: its own vocabulary (pipes, positions, GM buffers, core types, instruction
records), chip models, per-core instruction timing, multi-core launch.

Nothing here imports the kernel API (`asc_tui.ascendc`) or the tools: the kernel API speaks
this package's vocabulary and re-exports what kernel authors need.
"""
