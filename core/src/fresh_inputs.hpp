// Fresh inputs for every timed CPU sample, made by the host just before it (issue 39 item 1;
// the protocol: fresh_inputs_protocol.hpp). While a side's block runs, a thread of the host's
// answers each "next" of its worker with the next sample's inputs, made from the manifest's
// initialisers with a seed drawn from the test's secret for that sample alone, and keeps, for one
// sample of the block picked in secret, the buffers the call left: the driver compares them with
// the reference's for those inputs. A content cache of any key never hits; no later sample's
// inputs exist while a call runs, so no call can compute several.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "executor.hpp"
#include "fresh_inputs_protocol.hpp"
#include "sealed_blob.hpp"

namespace bb {

// Inputs whose values are the same whatever the seed (constants, arange, files): their names.
std::vector<std::string> repeating_inputs(const ConcreteCase& c);

// The salt of a sample's seeds: the inputs of sample `sample` of block `block` of a side are
// made as inputs_blob(salt, secret) makes them (mix_seed(secret, salt + ":" + name) each).
std::string fresh_salt(bool baseline, std::size_t block, std::size_t sample);

class FreshInputs {
 public:
  FreshInputs(const ConcreteCase& c, std::filesystem::path dir, uint64_t secret) : c_(c), dir_(std::move(dir)), secret_(secret) {}
  ~FreshInputs();
  FreshInputs(const FreshInputs&) = delete;
  FreshInputs& operator=(const FreshInputs&) = delete;

  // The side's stage made and sent to its worker's `session` (once per side). "" or why not.
  std::string attach(bool baseline, Executor& worker, const std::string& session, double timeout);
  bool attached(bool baseline) const { return side(baseline).base != nullptr; }

  // Serves the side's block `block` on a thread of its own until end(); keeps the buffers after
  // sample `check` (or after the block's last, if it has fewer), when given.
  void begin(bool baseline, std::size_t block, std::optional<std::size_t> check);
  struct Kept {
    std::size_t sample = 0;
    std::string salt;
    SealedBlob buffers;  // buffers_layout(c), as the call left them
  };
  struct Served {
    std::size_t samples = 0;    // inputs made
    double make_seconds = 0;    // the host's time making them
    std::optional<Kept> kept;
    std::string error;          // the pacing went wrong ("" when not)
  };
  Served end(bool baseline);

 private:
  struct Side {
    UniqueFd pacing;
    uint8_t* base = nullptr;
    std::thread server;
    UniqueFd stop_read, stop_write;
    Served served;
  };
  Side& side(bool baseline) { return sides_[baseline ? 1 : 0]; }
  const Side& side(bool baseline) const { return sides_[baseline ? 1 : 0]; }
  void serve(Side& s, bool baseline, std::size_t block, std::optional<std::size_t> check);
  std::string make(Side& s, const std::string& salt);
  std::optional<Kept> keep(Side& s, std::size_t sample, const std::string& salt);

  const ConcreteCase& c_;
  std::filesystem::path dir_;
  uint64_t secret_;
  FreshStageLayout layout_ = fresh_stage_layout(c_);
  Side sides_[2];
};

}  // namespace bb
