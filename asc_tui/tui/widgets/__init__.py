"""One pane per module; each takes immutable results and updates itself in place."""
