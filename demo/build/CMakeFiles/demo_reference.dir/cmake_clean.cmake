file(REMOVE_RECURSE
  "/tmp/bb_e2e/Tutorial.AddingAnOpAsTheDocsSayGivesAVerdict/home/.local/share/backendbench/custom_ops/demo/demo_reference.pdb"
  "/tmp/bb_e2e/Tutorial.AddingAnOpAsTheDocsSayGivesAVerdict/home/.local/share/backendbench/custom_ops/demo/demo_reference.so"
  "CMakeFiles/demo_reference.dir/demo_reference.cpp.o"
  "CMakeFiles/demo_reference.dir/demo_reference.cpp.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang CXX)
  include(CMakeFiles/demo_reference.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
