"""Periodic extrapolation: once a loop's scheduler state repeats, the rest of it is shifted copies."""
