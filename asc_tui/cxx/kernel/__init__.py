"""Kernel code generation: C++ declarations, statements and expressions translated onto the twin."""
