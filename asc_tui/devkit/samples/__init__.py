"""The samples room: a sample directory run as an operator (gen_data, host main(), verify)."""
