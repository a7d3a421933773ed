file(REMOVE_RECURSE
  "/tmp/bb_e2e/Tutorial.AddingAnOpAsTheDocsSayGivesAVerdict/home/.local/share/backendbench/custom_ops/demo/demo_cpp.pdb"
  "/tmp/bb_e2e/Tutorial.AddingAnOpAsTheDocsSayGivesAVerdict/home/.local/share/backendbench/custom_ops/demo/demo_cpp.so"
  "CMakeFiles/demo_cpp.dir/demo_cpp.cpp.o"
  "CMakeFiles/demo_cpp.dir/demo_cpp.cpp.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang CXX)
  include(CMakeFiles/demo_cpp.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
