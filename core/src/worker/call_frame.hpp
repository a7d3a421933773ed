// Owns everything one bb_call points at: DLTensors with their shapes and strides, attribute
// records, names and the error buffer. Valid while the frame lives.
#pragma once

#include <string>
#include <vector>

#include <backendbench/plugin.h>

#include "plan/cases.hpp"

namespace bb {

class CallFrame {
 public:
  // input_data[i] / output_data[i] point at the tensors' bytes (an in-place output should point
  // at its input's bytes).
  CallFrame(const std::string& op, const ConcreteCase& c, const std::vector<void*>& input_data,
            const std::vector<void*>& output_data, DLDevice device, void* stream);
  CallFrame(const CallFrame&) = delete;
  CallFrame& operator=(const CallFrame&) = delete;

  const bb_call* call() const { return &call_; }
  // The plugin's message, or "" if it wrote none.
  std::string error_message() const;
  void clear_error() { error_[0] = '\0'; }

 private:
  std::string op_;
  std::vector<std::vector<int64_t>> shapes_, strides_;
  std::vector<DLTensor> inputs_, outputs_;
  std::vector<std::string> name_storage_;
  std::vector<const char*> input_names_, output_names_;
  std::vector<std::string> attr_strings_;
  std::vector<std::vector<int64_t>> attr_ints_;
  std::vector<std::vector<double>> attr_floats_;
  std::vector<bb_attr> attrs_;
  std::vector<char> error_;
  bb_call call_{};
};

}  // namespace bb
