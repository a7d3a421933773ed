# vector_add as a Triton kernel (tritonbench's first operator, Triton's first tutorial), compiled
# ahead of time into the vector_add_triton plugin: see CMakeLists.txt beside this file and
# cmake/BackendBenchTriton.cmake. Each program adds BLOCK elements; the mask covers the tail.
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)
