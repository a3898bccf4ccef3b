"""The debug room: the sanitizer's tools, the precision check and the multi-rank deadlock check."""
