"""Data movement between GM and local memory: DataCopy and its slice form, scalar GM access."""
