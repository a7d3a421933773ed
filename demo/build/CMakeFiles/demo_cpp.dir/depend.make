# Empty dependencies file for demo_cpp.
# This may be replaced when dependencies are built.
