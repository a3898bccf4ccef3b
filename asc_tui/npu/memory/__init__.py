"""Global memory and its bandwidth: GM buffers, the shared HBM (lockstep closed form and solver), the L2."""
