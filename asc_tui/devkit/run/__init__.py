"""The run room: discover and load operators, run them (in a worker process), watch for saves."""
