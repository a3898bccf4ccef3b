"""The numbers' fast paths: table widening, BLAS threads and the cube's offload thread."""
