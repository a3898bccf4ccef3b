"""Host code: a sample's `main()` interpreted with C semantics, the host libraries and the ACL twin."""
