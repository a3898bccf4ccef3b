"""The vector unit's kernel API: level-2 and level-0 element-wise forms, reductions, transposes,
gather and sort."""
