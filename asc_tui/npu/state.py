"""The one piece of mutable module state: the core the kernel is running on right now.

Kernel API calls (`asc_tui.ascendc`) find their core here. Whoever runs kernel code on a core
sets it and restores it afterwards: the launcher (`npu/launch/blocks.py`) for each block, the mixed
block's sub-core threads as the baton passes between them (`npu/mix.py`), and the rank threads
of a multi-rank deadlock check (`devkit/debug/deadlock.py`) when a rank resumes after a collective.
"""

core = None  # the active `npu.core.Core`, or None outside a launch
