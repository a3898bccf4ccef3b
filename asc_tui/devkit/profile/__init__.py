"""The profile room: where the time goes, from the recorded timeline; traces, msprof files, calibration."""
