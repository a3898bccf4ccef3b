"""Source text to syntax: the preprocessor, the tree-sitter parse and the translation unit's declarations."""
