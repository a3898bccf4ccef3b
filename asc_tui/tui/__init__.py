"""The Textual workbench: renders what the devkit computes; never runs user code itself."""
