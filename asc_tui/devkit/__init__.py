"""The devkit: run pipeline, profile, debug and bench on top of the emulator (no Textual here)."""
