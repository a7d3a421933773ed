// Fresh inputs for every timed CPU sample, made by the host just before it (issue 39 item 1;
// the protocol: fresh_inputs_protocol.hpp). While a side's block runs, a thread of the host's
// answers each "next" of its worker with the next sample's inputs, made from the manifest's
// initialisers (fill_fresh) with a seed drawn for that sample alone (std::random_device: no
// sample's seed tells anything of another's, nor of the test's secret), and keeps the buffers
// one sample of the block left, picked in secret (reservoir sampling), taken when the worker
// said it had ended: the driver compares them with the reference's for those inputs. A content
// cache of any key never hits; no later sample's inputs exist while a call runs, so no call can
// compute several.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "protocol/fresh_inputs_protocol.hpp"
#include "protocol/sealed_blob.hpp"
#include "protocol/worker_protocol.hpp"
#include "run/workers/executor.hpp"

namespace bb {

// Inputs whose values are the same whatever the seed (constants, arange, files): their names.
std::vector<std::string> repeating_inputs(const ConcreteCase& c);

// Fills `data` (t.nbytes()) with fresh values of t's initialiser (randn, uniform, randint) from
// `seed`, at memory speed: a counter-based hash per element and, for randn, Box-Muller in float
// with polynomial logarithm, sine and cosine. Not the manifest's own generator (init.hpp: exact,
// shared with the device runtimes, and 20-50x slower): the same distribution, other bits. For
// every other initialiser: fill_tensor's values (they do not vary).
// `threads`: split a large tensor across the process's cores (else on the calling thread alone).
Status fill_fresh(const ConcreteTensor& t, void* data, uint64_t seed, const std::filesystem::path& dir = {}, bool threads = true);

// A CPU case's samples are written into a stage the host and the worker map. A device case's
// (`on_device`) are made by the worker on its device from the seed each go carries, and a sample
// is kept by the checker, which maps the implementation's buffers (`keep_on_device`, given to
// begin()): the host only paces and draws.
class FreshInputs {
 public:
  FreshInputs(const ConcreteCase& c, std::filesystem::path dir, bool on_device = false);
  ~FreshInputs();
  FreshInputs(const FreshInputs&) = delete;
  FreshInputs& operator=(const FreshInputs&) = delete;

  // The side's pacing socket sent to its worker's call prepared as `role` (once per side). "" or why not.
  std::string attach(bool baseline, Executor& worker, const std::string& role, double timeout);
  bool attached(bool baseline) const { return side(baseline).attached; }

  // Sends the side's next block its stage (a new one each block: where the buffers lie in memory
  // is each block's draw), and serves the block on a thread of its own until end(). `keeping`:
  // the buffers of one of its samples, each as likely as any other whatever their number, come
  // back with end() (both sides keep, so that both pay the same copies; the driver judges the
  // implementation's). `cpu` >= 0: the pairing's one CPU (cpu_pin.hpp), idle while its worker
  // waits for the inputs: the thread runs there, so that no other pairing's timed calls share a
  // core with it. "" or why it could not begin (then no block request may follow).
  // A device case: `keep_on_device(sample)` has the checker keep the buffers of the sample just
  // ended, before the next go ("" or why not, which ends the block in an error).
  using KeepOnDevice = std::function<std::string(std::size_t sample)>;
  std::string begin(bool baseline, bool keeping, int cpu = -1, KeepOnDevice keep_on_device = {});
  struct Kept {
    std::size_t sample = 0;
    uint64_t seed = 0;   // the sample's inputs: inputs_of(seed) (a device case's: fresh_input_seed per input)
    SealedBlob buffers;  // buffers_layout(c), as the call left them (a device case's: the checker holds them)
  };
  // The inputs of the sample made from `seed`, again (inputs_layout), for the reference.
  Expected<SealedBlob> inputs_of(uint64_t seed) const;
  struct Served {
    std::size_t samples = 0;    // inputs made
    double make_seconds = 0;    // the host's time making them
    double keep_seconds = 0;    // a device case's: the checker's time keeping samples (its worker waits)
    bool saw_last = false;      // the worker said its block's last sample had ended
    // Each sample's time on the host's clock from its go to its worker's word that it ended: the
    // sample's call and two wake-ups (clock_audit.hpp, audit_paced).
    std::vector<double> paced_seconds;
    std::optional<Kept> kept;
    std::string error;          // the pacing went wrong ("" when not)
  };
  Served end(bool baseline);

 private:
  struct Side {
    UniqueFd pacing;
    bool attached = false;
    uint8_t* base = nullptr;  // this block's stage
    std::thread server;
    UniqueFd stop_read, stop_write;
    Served served;
    std::vector<uint8_t> kept_bytes;  // the buffers kept so far in this block
    std::size_t kept_sample = 0;
    uint64_t kept_seed = 0;
    bool have_kept = false;
    KeepOnDevice keep_on_device;
  };
  Side& side(bool baseline) { return sides_[baseline ? 1 : 0]; }
  const Side& side(bool baseline) const { return sides_[baseline ? 1 : 0]; }
  void serve(Side& s, bool keeping, int cpu);
  std::string next_stage(Side& s);
  // Every input that varies, made from the sample's `seed`: at `stage` (buffers_layout: after its
  // guard), or at `blob` (inputs_layout). On the calling thread alone: a thread of the host's on
  // another core could share it with another pairing's timed calls.
  std::string make(uint8_t* stage, uint8_t* blob, uint64_t seed) const;
  // "" or why the sample could not be kept.
  std::string keep(Side& s, std::size_t sample, uint64_t seed);

  const ConcreteCase& c_;
  std::filesystem::path dir_;
  bool on_device_ = false;
  std::vector<bool> varies_;  // per input: whether its values change with the seed
  BlobLayout layout_ = buffers_layout(c_);  // the stage's
  Side sides_[2];
};

}  // namespace bb
