"""The one piece of mutable module state: the core the kernel is running on right now.

Kernel API calls (`asc_tui.ascendc`) find their core here. The launcher sets it for each block
and clears it afterwards; nothing else writes it.
"""

core = None  # the active `npu.core.Core`, or None outside a launch
