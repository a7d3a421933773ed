#include "worker/bound_call.hpp"

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstring>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "init.hpp"
#include "parallel.hpp"
#include "run/workers/sandbox_off.hpp"

namespace bb {

namespace {
// How long a witnessed call may hold the stream: its launches take microseconds; a first launch
// that loads its module synchronises the device and would wait the hold out (then the call runs
// again), so a long hold costs every new kernel of a run that much (200 ms made a tenth of the
// H100 myop loop). A watch ends the hold sooner: a call that has not returned kWitnessWatch
// after it began is waiting for the held stream, and the stream is let go then (held too long,
// as when the hold times out: the call runs again, its kernels loaded, under the whole hold with
// no watch, so a call that waits on the host before launching elsewhere is still seen
// (scale_cuda_latelaunch). 50 ms a new kernel became about 5.
constexpr double kWitnessHoldMs = 50;
constexpr auto kWitnessWatch = std::chrono::milliseconds(5);

// Lets the held stream go if the call has not returned by kWitnessWatch: stop() says whether it
// did. Without a thread for it, the hold's own timeout does the same, later.
class HoldWatch {
 public:
  HoldWatch(const bb_device_runtime& api, bool on) {
    if (!on) return;
    try {
      thread_ = std::thread([this, &api] {
        std::unique_lock lock(mutex_);
        if (!done_.wait_for(lock, kWitnessWatch, [this] { return returned_; })) {
          api.release_stream();
          released_ = true;
        }
      });
    } catch (const std::system_error&) {
    }
  }
  // The call returned: the watch ends (and is joined: no thread of the host's outlives the call).
  bool stop() {
    if (!thread_.joinable()) return false;
    {
      std::lock_guard lock(mutex_);
      returned_ = true;
    }
    done_.notify_one();
    thread_.join();
    return released_;
  }
  ~HoldWatch() { stop(); }

 private:
  std::mutex mutex_;
  std::condition_variable done_;
  bool returned_ = false, released_ = false;
  std::thread thread_;
};

void write_guards(HostBuffer& b) {
  uint8_t* p = b.raw();
  for (std::size_t i = 0; i < HostBuffer::kGuardBytes; ++i) {
    p[i] = guard_byte(i);
    p[HostBuffer::kGuardBytes + b.size() + i] = guard_byte(i + HostBuffer::kGuardBytes);
  }
}
}  // namespace

CallBuffers::CallBuffers(const ConcreteCase& c, const std::vector<const uint8_t*>& input_data) {
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    inputs.emplace_back(c.inputs[i].nbytes());
    if (i < input_data.size() && input_data[i]) parallel_copy(inputs.back().data(), input_data[i], c.inputs[i].nbytes());
  }
  for (const auto& o : c.outputs) {
    if (o.inplace_input >= 0) {
      outputs.emplace_back();
    } else {
      outputs.emplace_back(o.nbytes());
      outputs.back().poison(o.dtype);
    }
  }
}

CallBuffers::CallBuffers(const ConcreteCase& c, const std::vector<const uint8_t*>& input_data, uint8_t* place) {
  const BlobLayout l = buffers_layout(c);
  std::size_t k = 0;
  for (size_t i = 0; i < c.inputs.size(); ++i, ++k) {
    inputs.emplace_back(c.inputs[i].nbytes(), place + l.offsets[k]);
    if (i < input_data.size() && input_data[i]) parallel_copy(inputs.back().data(), input_data[i], c.inputs[i].nbytes());
  }
  for (const auto& o : c.outputs) {
    if (o.inplace_input >= 0) {
      outputs.emplace_back();
    } else {
      outputs.emplace_back(o.nbytes(), place + l.offsets[k]);
      outputs.back().poison(o.dtype);
    }
    ++k;
  }
}

void CallBuffers::reset(const ConcreteCase& c, const std::vector<const uint8_t*>& input_data) {
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    parallel_copy(inputs[i].data(), input_data[i], c.inputs[i].nbytes());
    write_guards(inputs[i]);
  }
  for (size_t j = 0; j < c.outputs.size(); ++j)
    if (c.outputs[j].inplace_input < 0) {
      outputs[j].poison(c.outputs[j].dtype);
      write_guards(outputs[j]);
    }
}

const uint8_t* CallBuffers::output(const ConcreteCase& c, size_t j) const {
  const int in = c.outputs[j].inplace_input;
  return in >= 0 ? inputs[static_cast<size_t>(in)].data() : outputs[j].data();
}

void CallBuffers::scrub() {
  for (auto* set : {&inputs, &outputs})
    for (auto& buf : *set) {
      uint8_t* p = buf.raw();
      for_each_chunk(buf.raw_size(), chunk_count(buf.raw_size(), std::size_t{16} << 20),
                     [&](std::size_t, std::size_t lo, std::size_t hi) { explicit_bzero(p + lo, hi - lo); });
    }
}

BoundCall::BoundCall(const std::string& op, const ConcreteCase& c, CallBuffers& b, const ExecPlace& ex, bool shareable)
    : c_(c), b_(b), ex_(ex) {
  if (ex_.rt) {
    const auto& api = ex_.rt->api();
    shareable_ = shareable && api.struct_size >= offsetof(bb_device_runtime, malloc_shareable) + sizeof(api.malloc_shareable) &&
                 api.malloc_shareable && api.export_shareable;
  }
  std::vector<void*> in_ptrs, out_ptrs;
  for (size_t i = 0; i < b.inputs.size(); ++i) {
    bool aliased = false;
    for (const auto& o : c.outputs) aliased = aliased || o.inplace_input == static_cast<int>(i);
    // An in-place target keeps a copy of what it held before the calls, to start each from.
    if (aliased) inplace_.push_back({i, HostBuffer(b.inputs[i].size())});
    in_ptrs.push_back(place(b.inputs[i], aliased, false));
  }
  for (size_t j = 0; j < c.outputs.size(); ++j) {
    const int in = c.outputs[j].inplace_input;
    out_ptrs.push_back(in >= 0 ? in_ptrs[static_cast<size_t>(in)] : place(b.outputs[j], true, true));
  }
  if (error_.empty()) frame_ = std::make_unique<CallFrame>(op, c, in_ptrs, out_ptrs, ex.dl, ex.stream);
}

BoundCall::~BoundCall() {
  if (ex_.rt && !lost_)
    for (auto& m : mirrors_)
      for (void* p : {m.dev, m.poison, m.pristine, m.snapshot, m.held})
        if (p) ex_.rt->api().free(p);
  if (ex_.rt && !lost_) {
    for (const auto& r : returned_)
      if (r.copy) ex_.rt->api().free(r.copy);
    if (side_stream_) ex_.rt->api().stream_destroy(side_stream_);
  }
}

bool BoundCall::has_device_check() const {
  const auto& api = ex_.rt->api();
  return api.struct_size >= offsetof(bb_device_runtime, bytes_differ) + sizeof(api.bytes_differ) && api.bytes_differ;
}

std::string BoundCall::export_mirror(std::size_t k, int* fd, std::size_t* bytes) const {
  if (!ex_.rt || !shareable_) return "the call's buffers are not shareable";
  if (k >= mirrors_.size()) return fmt::format("no mirror {}", k);
  if (int e = ex_.rt->api().export_shareable(mirrors_[k].dev, fd); e != 0) return "exporting a buffer: " + ex_.rt->describe(e);
  *bytes = mirrors_[k].bytes;
  return "";
}

bool BoundCall::restore_pristine() {
  if (!ex_.rt || lost_ || !pristine_) return false;
  const auto& api = ex_.rt->api();
  for (auto& m : mirrors_) {
    void* from = m.is_output ? m.poison : m.pristine;
    if (!from || api.memcpy_d2d(m.dev, from, m.bytes, ex_.stream) != 0) return false;
  }
  return api.stream_synchronize(ex_.stream) == 0;
}

std::string BoundCall::make_inputs(const std::vector<InputRecipe>& recipes) {
  if (!ex_.rt) return "inputs are made on a device only";
  const auto& api = ex_.rt->api();
  if (api.struct_size < offsetof(bb_device_runtime, fill_scattered) + sizeof(api.fill_scattered) || !api.fill || !api.fill_scattered)
    return "the device runtime cannot make inputs";
  if (recipes.size() != c_.inputs.size()) return fmt::format("{} input recipes for {} inputs", recipes.size(), c_.inputs.size());
  for (size_t i = 0; i < recipes.size(); ++i) {
    void* data = static_cast<uint8_t*>(mirrors_[i].dev) + HostBuffer::kGuardBytes;
    const auto n = static_cast<size_t>(c_.inputs[i].numel());
    if (recipes[i].fresh && !has_fill_fresh()) return "the device runtime cannot make fresh inputs";
    const int e = recipes[i].fresh       ? api.fill_fresh(&recipes[i].fill, data, n, ex_.stream)
                  : recipes[i].scatter > 0 ? api.fill_scattered(&recipes[i].fill, data, n, recipes[i].scatter)
                                           : api.fill(&recipes[i].fill, data, n);
    if (e != 0) return fmt::format("making input '{}' on the device: {}", c_.inputs[i].name, ex_.rt->describe(e));
  }
  if (int e = api.stream_synchronize(ex_.stream); e != 0) return "making the inputs on the device: " + ex_.rt->describe(e);
  return "";
}

bool BoundCall::has_fill_fresh() const {
  const auto& api = ex_.rt->api();
  return api.struct_size >= offsetof(bb_device_runtime, fill_fresh) + sizeof(api.fill_fresh) && api.fill_fresh;
}

std::string BoundCall::make_fresh_inputs(uint64_t sample_seed) {
  if (!ex_.rt) return "inputs are made on a device only";
  const auto& api = ex_.rt->api();
  if (!has_fill_fresh()) return "the device runtime cannot make fresh inputs";
  for (size_t i = 0; i < c_.inputs.size(); ++i) {
    const auto& t = c_.inputs[i];
    if (!varies_with_seed(t.init.kind)) continue;  // the same whatever the seed
    const auto recipe = input_recipe(t, fresh_input_seed(sample_seed, t.name));
    if (!recipe) return fmt::format("input '{}' cannot be made on the device", t.name);
    void* data = static_cast<uint8_t*>(mirrors_[i].dev) + HostBuffer::kGuardBytes;
    // On the call's stream, before the sample's eviction: not waited for.
    if (int e = api.fill_fresh(&recipe->fill, data, static_cast<size_t>(t.numel()), ex_.stream); e != 0)
      return fmt::format("making input '{}' on the device: {}", t.name, ex_.rt->describe(e));
  }
  return "";
}

std::string BoundCall::generate_inputs(const std::vector<InputRecipe>& recipes) {
  if (!restore_pristine()) return "the case's inputs are not kept on the device";
  return make_inputs(recipes);
}

std::string BoundCall::poison_own_outputs() {
  if (!ex_.rt || lost_) return "no device";
  const auto& api = ex_.rt->api();
  for (auto& m : mirrors_)
    if (m.is_output && m.poison)
      if (int e = api.memcpy_d2d(m.dev, m.poison, m.bytes, ex_.stream); e != 0) return "poisoning the outputs: " + ex_.rt->describe(e);
  if (int e = api.stream_synchronize(ex_.stream); e != 0) return "poisoning the outputs: " + ex_.rt->describe(e);
  return "";
}

void BoundCall::keep_pristine() {
  if (!ex_.rt || lost_) return;
  const auto& api = ex_.rt->api();
  for (auto& m : mirrors_) {
    if (m.is_output) continue;
    if (!m.pristine && api.malloc(&m.pristine, m.bytes) != 0) m.pristine = nullptr;
    if (!m.pristine || api.memcpy_d2d(m.pristine, m.dev, m.bytes, ex_.stream) != 0) return;  // the host's copy, then
  }
  pristine_ = api.stream_synchronize(ex_.stream) == 0;
}

std::string BoundCall::plugin_message() const { return !escaped_.empty() ? escaped_ : frame_ ? frame_->error_message() : ""; }

int BoundCall::launch(bb_kernel_fn fn) {
  if (!fn) {
    identity();
    return BB_OK;
  }
  try {
    return fn(frame_->call());
  } catch (const std::exception& e) {
    escaped_ = fmt::format("a C++ exception escaped the plugin: {}", e.what());
  } catch (...) {
    escaped_ = "a C++ exception escaped the plugin (not a std::exception)";
  }
  return BB_ERR_GENERIC;
}

CallOutcome BoundCall::finish_device() {
  CallOutcome out;
  if (!ex_.rt) return out;
  int e = ex_.rt->api().stream_synchronize(ex_.stream);
  if (e == 0) e = ex_.rt->api().get_last_error();
  if (e != 0) {
    out.sticky = ex_.rt->sticky(e);
    lost_ = lost_ || out.sticky;
    out.error = (out.sticky ? "sticky device error: " : "device error: ") + ex_.rt->describe(e);
  }
  return out;
}

std::string BoundCall::collect() {
  if (!python_) return "";
  std::string error;
  const bb_call* call = frame_->call();
  for (int32_t k = 0; k < call->num_outputs && error.empty(); ++k) {
    const void* from = python_->returned(k);
    const DLTensor& t = call->outputs[k];
    void* to = static_cast<uint8_t*>(t.data) + t.byte_offset;
    const size_t bytes = c_.outputs[static_cast<size_t>(k)].nbytes();
    if (!from || from == to || bytes == 0) continue;
    if (!ex_.rt) std::memcpy(to, from, bytes);
    else if (int e = ex_.rt->api().memcpy_d2d(to, from, bytes, ex_.stream); e != 0)
      error = fmt::format("copying what the call returned into output {}: {}", k, ex_.rt->describe(e));
  }
  python_->release();
  return error;
}

void BoundCall::returned_error(int rc, CallOutcome& out) const {
  const std::string msg = plugin_message();
  out.unsupported = rc == BB_ERR_UNSUPPORTED;
  if (out.unsupported) out.error = fmt::format("BB_ERR_UNSUPPORTED: {}", msg.empty() ? "(no message)" : msg);
  else out.error = fmt::format("returned {}{}{}", rc, msg.empty() ? "" : ": ", msg.empty() ? "(no message)" : msg);
}

CallOutcome BoundCall::run(bb_kernel_fn fn) {
  frame_->clear_error();
  escaped_.clear();
  const int rc = launch(fn);
  const std::string collected = rc == BB_OK ? collect() : "";
  CallOutcome out = finish_device();
  if (out.error.empty()) out.error = collected;
  if (out.error.empty() && rc != BB_OK) returned_error(rc, out);
  return out;
}

CallOutcome BoundCall::run_witnessed(bb_kernel_fn fn, bool watch) {
  const auto& api = ex_.rt ? ex_.rt->api() : bb_device_runtime{};
  if (!ex_.rt || !fn || !api.block_stream_ticket || !api.ticket_timed_out) return run(fn);
  frame_->clear_error();
  escaped_.clear();
  // What every buffer holds before the call, kept on the device where it can be (a copy beside
  // each, compared there while the stream is held), else in host memory. The runtime's check is
  // made ready first: a call may take every byte of device memory.
  int unused = 0;
  bool on_device = has_device_check() && api.bytes_differ(nullptr, nullptr, 0, &unused) == 0;
  for (auto& m : mirrors_) {
    if (!on_device) break;
    if (!m.snapshot && api.malloc(&m.snapshot, m.bytes) != 0) m.snapshot = nullptr;
    on_device = m.snapshot && api.memcpy_d2d(m.snapshot, m.dev, m.bytes, ex_.stream) == 0;
  }
  std::vector<std::vector<uint8_t>> before;
  if (!on_device) {
    for (auto& m : mirrors_) {
      before.emplace_back(m.host->raw_size());
      if (api.memcpy_d2h(before.back().data(), m.dev, m.host->raw_size()) != 0) return run(fn);
    }
  }
  // A Python call's inputs hold poison until the held stream runs (python_witness.cpp).
  const bool python = python_ && on_device && !sandbox_part_off("witness") && hold_inputs();
  auto unwitnessed = [&] {
    if (python) unhold_inputs();
    return run(fn);
  };
  if (api.stream_synchronize(ex_.stream) != 0) return unwitnessed();
  uint32_t ticket = 0;
  if (api.block_stream_ticket(ex_.stream, kWitnessHoldMs, &ticket) != 0) return unwitnessed();
  if (python && !queue_input_restore()) {
    api.release_stream();
    return unwitnessed();
  }
  HoldWatch hold_watch(api, watch);
  const int rc = launch(fn);
  const bool released = hold_watch.stop();
  std::this_thread::sleep_for(std::chrono::milliseconds(2));  // time for work elsewhere to show
  if (python && rc == BB_OK) keep_returned();
  bool changed = false;
  for (size_t k = 0; k < mirrors_.size() && !changed; ++k) {
    auto& m = mirrors_[k];
    if (on_device) {
      int differ = 0;
      if (api.bytes_differ(m.dev, m.snapshot, m.bytes, &differ) != 0) break;
      changed = differ != 0;
    } else {
      const auto now = std::make_unique_for_overwrite<uint8_t[]>(m.host->raw_size());
      if (api.memcpy_d2h(now.get(), m.dev, m.host->raw_size()) != 0) break;
      changed = std::memcmp(now.get(), before[k].data(), m.host->raw_size()) != 0;
    }
  }
  if (python && rc == BB_OK && !changed) changed = returned_changed_while_held();
  const std::string collected = rc == BB_OK ? collect() : "";
  api.release_stream();
  CallOutcome out = finish_device();
  if (out.error.empty()) out.error = collected;
  int timed_out = 0;
  api.ticket_timed_out(ticket, &timed_out);
  if (out.error.empty() && rc != BB_OK) returned_error(rc, out);
  const bool held_throughout = !timed_out && !released;
  // What it returned was its result already while the stream was held: made from the poison
  // off the stream, unless the same call made again gives the same bytes (python_witness.cpp).
  if (out.error.empty() && !changed && held_throughout && python && rc == BB_OK && returned_while_held())
    changed = made_from_held_inputs(fn);
  if (out.error.empty() && changed && held_throughout) {
    out.outside = true;
    api.synchronize();  // let it finish before anything else touches the buffers
  }
  out.held_too_long = !held_throughout;
  return out;
}

void BoundCall::save_inplace() {
  for (auto& [i, saved] : inplace_) std::memcpy(saved.raw(), b_.inputs[i].raw(), saved.raw_size());
  if (!ex_.rt) return;
  for (auto& m : mirrors_)
    if (m.poison && !m.is_output) ex_.rt->api().memcpy_d2d(m.poison, m.dev, m.host->raw_size(), ex_.stream);
  ex_.rt->api().stream_synchronize(ex_.stream);
}

int BoundCall::poison_outputs() {
  if (!ex_.rt) {
    for (size_t j = 0; j < c_.outputs.size(); ++j)
      if (c_.outputs[j].inplace_input < 0) b_.outputs[j].poison(c_.outputs[j].dtype);
    for (auto& [i, saved] : inplace_) std::memcpy(b_.inputs[i].raw(), saved.raw(), saved.raw_size());
    return 0;
  }
  for (auto& m : mirrors_)
    if (m.poison)
      if (int e = ex_.rt->api().memcpy_d2d(m.dev, m.poison, m.host->raw_size(), ex_.stream); e != 0) return e;
  return 0;
}

void BoundCall::wipe_device() {
  if (!ex_.rt || lost_) return;
  for (auto& m : mirrors_) ex_.rt->api().memset(m.dev, 0, m.host->raw_size(), ex_.stream);
  ex_.rt->api().stream_synchronize(ex_.stream);
}

std::string BoundCall::upload() {
  if (!ex_.rt) return "";
  for (auto& m : mirrors_)
    if (int e = ex_.rt->api().memcpy_h2d(m.dev, m.host->raw(), m.host->raw_size()); e != 0) return "copy to device: " + ex_.rt->describe(e);
  return "";
}

std::string BoundCall::download() {
  if (!ex_.rt) return "";
  for (auto& m : mirrors_)
    if (int e = ex_.rt->api().memcpy_d2h(m.host->raw(), m.dev, m.host->raw_size()); e != 0) return "copy back: " + ex_.rt->describe(e);
  return "";
}

void* BoundCall::place(HostBuffer& buf, bool keep_copy, bool is_output) {
  if (!ex_.rt) return buf.data();
  // Whole 256-byte units: the last 128-byte cache line is the buffer's own (the timer drops
  // the buffer's lines from L2 between cold samples: device_timer.hpp).
  const size_t bytes = (buf.raw_size() + 255) / 256 * 256;
  auto alloc = [&](void** p, bool share = false) -> bool {
    // Shareable where asked and the runtime can (else plain memory, and no device check).
    const bool shared = share && ex_.rt->api().malloc_shareable(p, bytes) == 0;
    if (!shared)
      if (int e = ex_.rt->api().malloc(p, bytes); e != 0) {
        if (error_.empty()) error_ = fmt::format("allocating {} bytes: {}", buf.raw_size(), ex_.rt->describe(e));
        return false;
      }
    if (int e = ex_.rt->api().memcpy_h2d(*p, buf.raw(), buf.raw_size()); e != 0 && error_.empty())
      error_ = "copy to device: " + ex_.rt->describe(e);
    return true;
  };
  void* dev = nullptr;
  if (!alloc(&dev, shareable_)) return nullptr;
  Mirror m{&buf, dev, nullptr, is_output, bytes};
  if (keep_copy && !alloc(&m.poison)) m.poison = nullptr;
  mirrors_.push_back(m);
  if (!is_output) input_ranges_.push_back({dev, bytes});
  return static_cast<uint8_t*>(dev) + HostBuffer::kGuardBytes;
}

void BoundCall::identity() {
  const auto& in = c_.inputs[0];
  for (size_t j = 0; j < c_.outputs.size(); ++j) {
    const auto& o = c_.outputs[j];
    if (o.inplace_input == 0) continue;
    const int64_t n = std::min(in.numel(), o.numel());
    for (int64_t i = 0; i < n; ++i)
      store_element(o.dtype, b_.outputs[j].data(), static_cast<size_t>(i), load_element(in.dtype, b_.inputs[0].data(), static_cast<size_t>(i)));
  }
}

}  // namespace bb
