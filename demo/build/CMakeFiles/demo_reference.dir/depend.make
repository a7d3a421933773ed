# Empty dependencies file for demo_reference.
# This may be replaced when dependencies are built.
