#include "worker/finite_differences.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include <backendbench/plugin.hpp>

#include "dtype.hpp"
#include "worker/call_error.hpp"

namespace bb {

namespace {

std::mutex forwards_mutex;
std::map<std::string, bb_kernel_fn>& forwards() {
  static std::map<std::string, bb_kernel_fn> m;
  return m;
}

int fail(const bb_call* call, const std::string& message) { return call_error(call, message); }

// A tensor in double precision: its values, and a DLTensor over them with the original's shape.
struct DoubleTensor {
  std::vector<double> values;
  std::vector<int64_t> shape;
  DLTensor t{};
  explicit DoubleTensor(const DLTensor& like) : values(static_cast<std::size_t>(numel_of(like))), shape(like.shape, like.shape + like.ndim) {
    t.data = values.data();
    t.device = {kDLCPU, 0};
    t.ndim = like.ndim;
    t.dtype = {kDLFloat, 64, 1};
    t.shape = shape.data();
  }
  DoubleTensor(const DoubleTensor&) = delete;
};

}  // namespace

void set_differences_forward(const std::string& op, bb_kernel_fn forward) {
  std::lock_guard lock(forwards_mutex);
  forwards()[op] = forward;
}

extern "C" int backward_by_differences(const bb_call* call) {
  bb_kernel_fn forward = nullptr;
  {
    std::lock_guard lock(forwards_mutex);
    const auto it = forwards().find(call->op ? call->op : "");
    if (it != forwards().end()) forward = it->second;
  }
  if (!forward) return fail(call, "finite differences: no forward of this op to differentiate");
  for (int i = 0; i < call->num_inputs; ++i)
    if (call->inputs[i].device.device_type != kDLCPU) return fail(call, "finite differences run on the CPU: the case's tensors are not there");
  // The forward's outputs are the trailing grad_<output> inputs; the forward's inputs precede them.
  int forward_inputs = call->num_inputs;
  while (forward_inputs > 0 && std::string_view(call->input_names[forward_inputs - 1]).rfind("grad_", 0) == 0) --forward_inputs;
  const int forward_outputs = call->num_inputs - forward_inputs;
  if (forward_outputs == 0) return fail(call, "finite differences: the call has no grad_<output> input");

  // The forward's inputs: floating ones in double precision, others as they are.
  std::vector<std::unique_ptr<DoubleTensor>> doubles(static_cast<std::size_t>(forward_inputs));
  std::vector<DLTensor> in(call->inputs, call->inputs + forward_inputs);
  for (int i = 0; i < forward_inputs; ++i) {
    const auto d = from_dlpack(call->inputs[i].dtype);
    if (!d || !is_floating(*d)) continue;
    auto& t = doubles[static_cast<std::size_t>(i)] = std::make_unique<DoubleTensor>(call->inputs[i]);
    const auto* src = static_cast<const char*>(call->inputs[i].data) + call->inputs[i].byte_offset;
    for (std::size_t k = 0; k < t->values.size(); ++k) t->values[k] = load_element(*d, src, k);
    in[static_cast<std::size_t>(i)] = t->t;
  }
  std::vector<std::unique_ptr<DoubleTensor>> plus, minus;
  std::vector<std::vector<double>> grad_out;
  std::vector<std::string> out_names;
  for (int o = 0; o < forward_outputs; ++o) {
    const DLTensor& g = call->inputs[forward_inputs + o];
    const auto d = from_dlpack(g.dtype);
    if (!d) return fail(call, fmt::format("finite differences: {} has a dtype of no kind known", call->input_names[forward_inputs + o]));
    plus.push_back(std::make_unique<DoubleTensor>(g));
    minus.push_back(std::make_unique<DoubleTensor>(g));
    grad_out.emplace_back(static_cast<std::size_t>(numel_of(g)));
    for (std::size_t k = 0; k < grad_out.back().size(); ++k) grad_out.back()[k] = load_element(*d, static_cast<const char*>(g.data) + g.byte_offset, k);
    out_names.push_back(std::string(call->input_names[forward_inputs + o]).substr(5));
  }
  std::vector<const char*> out_name_ptrs;
  for (const auto& n : out_names) out_name_ptrs.push_back(n.c_str());
  std::vector<DLTensor> out_plus, out_minus;
  for (int o = 0; o < forward_outputs; ++o) out_plus.push_back(plus[static_cast<std::size_t>(o)]->t), out_minus.push_back(minus[static_cast<std::size_t>(o)]->t);
  std::vector<char> error(1024);
  auto run = [&](std::vector<DLTensor>& outs) {
    bb_call f = *call;
    f.num_inputs = forward_inputs;
    f.inputs = in.data();
    f.num_outputs = forward_outputs;
    f.outputs = outs.data();
    f.output_names = out_name_ptrs.data();
    f.error = error.data();
    f.error_capacity = error.size();
    error[0] = '\0';
    return forward(&f);
  };

  for (int g = 0; g < call->num_outputs; ++g) {
    const std::string name = call->output_names[g];
    const std::string x_name = name.rfind("grad_", 0) == 0 ? name.substr(5) : name;
    int x = -1;
    for (int i = 0; i < forward_inputs; ++i)
      if (x_name == call->input_names[i]) x = i;
    if (x < 0 || !doubles[static_cast<std::size_t>(x)]) return fail(call, fmt::format("finite differences: {} is the gradient of no floating input", name));
    const auto gd = from_dlpack(call->outputs[g].dtype);
    if (!gd) return fail(call, fmt::format("finite differences: {} has a dtype of no kind known", name));
    auto& values = doubles[static_cast<std::size_t>(x)]->values;
    void* gdata = static_cast<char*>(call->outputs[g].data) + call->outputs[g].byte_offset;
    for (std::size_t j = 0; j < values.size(); ++j) {
      const double keep = values[j], h = 1e-5 * std::max(1.0, std::abs(keep));
      values[j] = keep + h;
      if (int rc = run(out_plus); rc != 0) return fail(call, fmt::format("finite differences: the reference's forward in float64 failed: {}", error.data()));
      values[j] = keep - h;
      if (int rc = run(out_minus); rc != 0) return fail(call, fmt::format("finite differences: the reference's forward in float64 failed: {}", error.data()));
      values[j] = keep;
      double sum = 0;
      for (std::size_t o = 0; o < grad_out.size(); ++o)
        for (std::size_t k = 0; k < grad_out[o].size(); ++k) sum += grad_out[o][k] * (plus[o]->values[k] - minus[o]->values[k]);
      store_element(*gd, gdata, j, sum / (2 * h));
    }
  }
  return 0;
}

}  // namespace bb
