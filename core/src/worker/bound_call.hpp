// One call of a plugin function, bound to its tensors where it runs (worker side): the staging
// buffers in host memory (inputs, and outputs poisoned or aliasing an input, each between guard
// bytes), their device mirrors, and the call frame the plugin receives. A bound call is invoked
// any number of times; between calls its inputs are rewritten from a pristine copy and its
// outputs poisoned again.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <backendbench/detail/python_bridge.h>
#include <backendbench/device_runtime.h>

#include "devices/device.hpp"
#include "host_buffer.hpp"
#include "plan/cases.hpp"
#include "protocol/worker_protocol.hpp"
#include "worker/call_frame.hpp"

namespace bb {

// Where a call runs: the CPU (no runtime), or a device with the worker's stream for it.
struct ExecPlace {
  DeviceRuntime* rt = nullptr;  // null: the CPU
  int ordinal = 0;
  void* stream = nullptr;
  DLDevice dl{kDLCPU, 0};
};

// The tensors of one call, staged in host memory, each with guard bytes around it.
struct CallBuffers {
  std::vector<HostBuffer> inputs;
  std::vector<HostBuffer> outputs;  // an empty buffer for an in-place output

  // Inputs copied from `input_data` (one pointer per input, c.inputs[i].nbytes() each; none, or
  // null: left as allocated, for inputs made on the device); outputs poisoned.
  CallBuffers(const ConcreteCase& c, const std::vector<const uint8_t*>& input_data);
  // The same, each buffer laid over `place` at its offset of buffers_layout(c) (the stage of
  // fresh inputs the host writes: fresh_inputs_protocol.hpp).
  CallBuffers(const ConcreteCase& c, const std::vector<const uint8_t*>& input_data, uint8_t* place);
  // Inputs rewritten from `input_data`, outputs poisoned again; guards are rewritten too.
  void reset(const ConcreteCase& c, const std::vector<const uint8_t*>& input_data);
  // An output's bytes in host memory (after BoundCall::download for a device call).
  const uint8_t* output(const ConcreteCase& c, size_t j) const;
  // Zeroes every byte (a reference's results do not outlive their use in this process).
  void scrub();
};

struct CallOutcome {
  std::string error;           // "" on success
  bool sticky = false;         // the device context is lost
  bool outside = false;        // run_witnessed: outputs changed while the given stream was held
  bool held_too_long = false;  // run_witnessed: the hold timed out (the call synchronised the device)
  bool unsupported = false;    // it returned BB_ERR_UNSUPPORTED (error holds its message), and nothing else went wrong
};


class BoundCall {
 public:
  // shareable: the device mirrors in memory another process can map (export_mirror), where the
  // runtime can make it.
  BoundCall(const std::string& op, const ConcreteCase& c, CallBuffers& b, const ExecPlace& ex, bool shareable = false);
  ~BoundCall();
  BoundCall(const BoundCall&) = delete;
  BoundCall& operator=(const BoundCall&) = delete;

  const std::string& setup_error() const { return error_; }
  const bb_call* call() const { return frame_->call(); }
  std::string plugin_message() const;
  // out.error for a call that returned `rc` (not BB_OK); out.unsupported for BB_ERR_UNSUPPORTED.
  void returned_error(int rc, CallOutcome& out) const;
  bool on_device() const { return ex_.rt != nullptr; }
  const ExecPlace& place() const { return ex_; }

  // A Python implementation's calls return their results (the bridge holds them); collect()
  // copies them into the outputs after the call, outside any timed region. Null: a library.
  void set_python(const bb_python_bridge* bridge) { python_ = bridge; }
  // Copies what the last call returned into its outputs (queued on the call's stream), then
  // lets it go; "" or the device's error. Nothing for a library.
  std::string collect();

  // Launches fn (identity when null) without waiting for a device. A C++ exception that escapes
  // a plugin (one that skipped BB_KERNEL_IMPL) is that call's error.
  int launch(bb_kernel_fn fn);
  // Waits for the device and reports its errors; sticky ones mark the context lost.
  CallOutcome finish_device();
  // One call: launch, collect, wait, check the return code and the device's errors.
  CallOutcome run(bb_kernel_fn fn);
  // run(), with the given stream held by a blocking kernel while the plugin launches: outputs
  // that change before the stream is released were written by work elsewhere (the legacy
  // default stream, a stream of its own). On the CPU: run().
  // `watch`: let the held stream go once the call has not returned 5 ms after it began (a first
  // launch loading its kernel); false for the call run again, which is witnessed under the
  // whole hold (a call that waits on the host before launching elsewhere is seen then).
  CallOutcome run_witnessed(bb_kernel_fn fn, bool watch = true);

  // The inputs' device memory, whole allocations, as the cold timer may evict it (outputs are
  // rewritten before every sample: discarding their lines would drop that).
  const std::vector<bb_device_range>& input_ranges() const { return input_ranges_; }

  // Rewrites every output with its poison pattern where the call reads it, and every in-place
  // target with what it held at save_inplace(): on the host, or on the device by copies queued
  // on the stream (ordered before what follows on it). 0 or the runtime's error code.
  int poison_outputs();
  // Keeps what the in-place targets hold now (the restored inputs, before a block of calls).
  void save_inplace();
  // Zeroes the device mirrors (a reference's results, before its memory goes back to the pool).
  void wipe_device();
  // Copies every staging buffer to its device mirror / every mirror back.
  std::string upload();
  std::string download();
  // Mirror k (inputs, then outputs that are no input's) as a new file descriptor another
  // process maps (device_check.hpp), with its size in bytes; an error where it is not shareable.
  std::string export_mirror(std::size_t k, int* fd, std::size_t* bytes) const;
  // Keeps a device copy of what the input mirrors hold now (the case's inputs, just uploaded),
  // so that restore_pristine() can start a call or block from them without the host.
  void keep_pristine();
  bool keeps_pristine() const { return pristine_; }
  // Every input mirror rewritten from that copy and every output poisoned, by copies on the
  // device; the host's staging buffers are left as they are. False where it cannot be done
  // (the CPU, no copy kept, a device error): the caller resets and uploads instead.
  bool restore_pristine();
  // The input mirrors made on the device as `recipes` say (one per input), starting from the
  // case's inputs kept there (restore_pristine: guards whole, outputs poisoned). "" or why it
  // cannot: the CPU, no copy kept, a runtime without fill, a device error.
  std::string generate_inputs(const std::vector<InputRecipe>& recipes);
  // The input mirrors' data made on the device as `recipes` say, guards as they are (a prepared call's
  // first inputs, before keep_pristine).
  std::string make_inputs(const std::vector<InputRecipe>& recipes);
  // A timed sample's fresh inputs (fresh_inputs_protocol.hpp): every input whose initialiser
  // varies made on the device from fresh_input_seed(sample_seed, its name) by the runtime's
  // fill_fresh, queued on the call's stream; the others keep their values. "" or why not.
  std::string make_fresh_inputs(uint64_t sample_seed);
  bool has_fill_fresh() const;  // a runtime of version 9 or later
  // Every output that is no input's rewritten with its poison, the inputs left as they are (a
  // checked call's, written there by the checker). "" or the device's error.
  std::string poison_own_outputs();

 private:
  void* place(HostBuffer& buf, bool keep_copy, bool is_output);
  void identity();

  const ConcreteCase& c_;
  CallBuffers& b_;
  ExecPlace ex_;
  struct Mirror {
    HostBuffer* host;
    void* dev;
    void* poison = nullptr;  // a device copy to start each call from: the poisoned output, the saved in-place input
    bool is_output = false;
    size_t bytes = 0;           // of each device allocation (the guarded region, in whole 256-byte units)
    void* pristine = nullptr;   // an input's copy of the case's values (keep_pristine)
    void* snapshot = nullptr;   // what it held before a witnessed call
    void* held = nullptr;       // an input's values while a witnessed Python call's stream is held (the mirror holds poison)
  };
  // A witnessed Python call (python_witness.cpp): the inputs poisoned until the held stream runs,
  // what the call returned kept as it was while held, and a call whose result existed then made
  // again on the inputs it was given. False where a step cannot be done.
  bool hold_inputs();
  void unhold_inputs();
  bool queue_input_restore();
  void keep_returned();
  bool returned_changed_while_held() const;
  bool returned_while_held();
  bool made_from_held_inputs(bb_kernel_fn fn);
  struct Returned {
    void* copy = nullptr;       // device memory of the output's size
    const void* from = nullptr; // what the call returned, this call (null: nothing kept)
    void* to = nullptr;         // the output it is copied into
    size_t bytes = 0;
  };
  std::vector<Returned> returned_;  // per output
  void* side_stream_ = nullptr;  // for the copies made while the call's stream is held
  bool has_device_check() const;
  bool pristine_ = false;
  const bb_python_bridge* python_ = nullptr;
  bool shareable_ = false;
  std::vector<std::pair<size_t, HostBuffer>> inplace_;  // (input, its saved copy) of in-place targets
  std::vector<Mirror> mirrors_;
  std::vector<bb_device_range> input_ranges_;
  std::unique_ptr<CallFrame> frame_;
  std::string error_;
  std::string escaped_;
  bool lost_ = false;
};

}  // namespace bb
