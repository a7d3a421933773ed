file(REMOVE_RECURSE
  "/tmp/bb_e2e/Tutorial.AddingAnOpAsTheDocsSayGivesAVerdict/home/.local/share/backendbench/custom_ops/demo/demo_cuda.pdb"
  "/tmp/bb_e2e/Tutorial.AddingAnOpAsTheDocsSayGivesAVerdict/home/.local/share/backendbench/custom_ops/demo/demo_cuda.so"
  "CMakeFiles/demo_cuda.dir/demo_cuda.cu.o"
  "CMakeFiles/demo_cuda.dir/demo_cuda.cu.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang CUDA)
  include(CMakeFiles/demo_cuda.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
