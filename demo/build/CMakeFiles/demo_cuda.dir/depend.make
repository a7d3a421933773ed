# Empty dependencies file for demo_cuda.
# This may be replaced when dependencies are built.
