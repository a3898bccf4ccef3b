"""Record once, replay many: template blocks, the symbolic block index, their numeric traces."""
