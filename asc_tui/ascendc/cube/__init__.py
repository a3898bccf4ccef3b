"""The cube's kernel API: Nd2Nz copies, LoadData, Mmad and Fixpipe."""
