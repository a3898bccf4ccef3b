"""The workbench's modal screens: the benchmark diff and the key help."""
