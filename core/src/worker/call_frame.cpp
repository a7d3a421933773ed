#include "worker/call_frame.hpp"

#include <cstring>

namespace bb {

namespace {
std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size());
  int64_t acc = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    s[d] = acc;
    acc *= shape[d];
  }
  return s;
}
}  // namespace

CallFrame::CallFrame(const std::string& op, const ConcreteCase& c, const std::vector<void*>& input_data,
                     const std::vector<void*>& output_data, DLDevice device, void* stream)
    : op_(op), error_(4096, '\0') {
  const size_t n_in = c.inputs.size(), n_out = c.outputs.size();
  shapes_.reserve(n_in + n_out);
  strides_.reserve(n_in + n_out);
  name_storage_.reserve(n_in + n_out);
  auto make = [&](const std::vector<int64_t>& shape, DType dtype, void* data) {
    shapes_.push_back(shape);
    strides_.push_back(contiguous_strides(shape));
    DLTensor t{};
    t.data = data;
    t.device = device;
    t.ndim = static_cast<int32_t>(shape.size());
    t.dtype = to_dlpack(dtype);
    t.shape = shapes_.back().data();
    t.strides = strides_.back().data();
    t.byte_offset = 0;
    return t;
  };
  for (size_t i = 0; i < n_in; ++i) {
    inputs_.push_back(make(c.inputs[i].shape, c.inputs[i].dtype, input_data[i]));
    name_storage_.push_back(c.inputs[i].name);
  }
  for (size_t i = 0; i < n_out; ++i) {
    outputs_.push_back(make(c.outputs[i].shape, c.outputs[i].dtype, output_data[i]));
    name_storage_.push_back(c.outputs[i].name);
  }
  for (size_t i = 0; i < n_in; ++i) input_names_.push_back(name_storage_[i].c_str());
  for (size_t i = 0; i < n_out; ++i) output_names_.push_back(name_storage_[n_in + i].c_str());

  attr_strings_.reserve(c.attrs.size() * 2);
  attr_ints_.reserve(c.attrs.size());
  attr_floats_.reserve(c.attrs.size());
  for (const auto& [name, value] : c.attrs) {
    attr_strings_.push_back(name);
    bb_attr a{};
    a.name = attr_strings_.back().c_str();
    if (auto* i = std::get_if<int64_t>(&value)) a.kind = BB_ATTR_INT, a.i = *i, a.f = static_cast<double>(*i);
    else if (auto* d = std::get_if<double>(&value)) a.kind = BB_ATTR_FLOAT, a.f = *d;
    else if (auto* b = std::get_if<bool>(&value)) a.kind = BB_ATTR_BOOL, a.i = *b ? 1 : 0;
    else if (auto* s = std::get_if<std::string>(&value)) {
      attr_strings_.push_back(*s);
      a.kind = BB_ATTR_STRING;
      a.s = attr_strings_.back().c_str();
    } else if (auto* il = std::get_if<std::vector<int64_t>>(&value)) {
      attr_ints_.push_back(*il);
      a.kind = BB_ATTR_INT_LIST;
      a.ints = attr_ints_.back().data();
      a.count = static_cast<int64_t>(il->size());
    } else if (auto* fl = std::get_if<std::vector<double>>(&value)) {
      attr_floats_.push_back(*fl);
      a.kind = BB_ATTR_FLOAT_LIST;
      a.floats = attr_floats_.back().data();
      a.count = static_cast<int64_t>(fl->size());
    }
    attrs_.push_back(a);
  }

  call_.struct_size = sizeof(bb_call);
  call_.abi_version = BB_ABI_VERSION;
  call_.op = op_.c_str();
  call_.num_inputs = static_cast<int32_t>(n_in);
  call_.inputs = inputs_.data();
  call_.input_names = input_names_.data();
  call_.num_outputs = static_cast<int32_t>(n_out);
  call_.outputs = outputs_.data();
  call_.output_names = output_names_.data();
  call_.num_attrs = static_cast<int32_t>(attrs_.size());
  call_.attrs = attrs_.data();
  call_.stream = stream;
  call_.error = error_.data();
  call_.error_capacity = error_.size();
}

std::string CallFrame::error_message() const {
  return std::string(error_.data(), strnlen(error_.data(), error_.size()));
}

}  // namespace bb
