#include "compare/merge.hpp"

#include <algorithm>
#include <map>
#include <queue>
#include <set>
#include <tuple>
#include <unordered_map>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace bb {

namespace {

// "shard 2/3" for index 1 of 3: the 1-based form --shard takes.
std::string shard_name(const ShardInfo& s) { return fmt::format("shard {}/{}", s.index + 1, s.count); }

// The shards an input holds: itself, or those a merged run joined.
std::vector<ShardInfo> covered(const RunRecord& r) { return r.merged_shards.empty() ? std::vector<ShardInfo>{r.shard} : r.merged_shards; }

// Whether every shard an input holds ran to its end. A merged run is incomplete when shards were
// missing, which a later merge may supply: what counts is how its own shards ended.
bool finished(const RunRecord& r) {
  if (r.merged_shards.empty() || !r.provenance.is_object() || !r.provenance.contains("merge")) return r.complete;
  const auto& merged = r.provenance["merge"];
  if (!merged.is_object() || !merged.contains("shards") || !merged["shards"].is_array()) return r.complete;
  for (const auto& s : merged["shards"])
    if (!s.is_object() || !s.value("complete", false)) return false;
  return true;
}

template <typename T>
void append_unique(std::vector<T>& to, const std::vector<T>& from) {
  for (const auto& x : from)
    if (std::find(to.begin(), to.end(), x) == to.end()) to.push_back(x);
}

// Each op's cases in sweep order, from the orders the shards ran them in: every shard's run of
// one (op, impl, repeat) is a subsequence of the op's case list, so a topological order of
// "came right before" over all of them restores the list (ties, and any inconsistency, go by
// first appearance).
std::map<std::string, std::unordered_map<std::string, std::size_t>> case_ranks(const std::vector<const ShardRun*>& shards) {
  struct Graph {
    std::vector<std::string> nodes;  // first-appearance order
    std::unordered_map<std::string, std::size_t> id;
    std::vector<std::set<std::size_t>> next;
    std::size_t node(const std::string& c) {
      auto [it, fresh] = id.emplace(c, nodes.size());
      if (fresh) {
        nodes.push_back(c);
        next.emplace_back();
      }
      return it->second;
    }
  };
  std::map<std::string, Graph> graphs;
  for (const auto* s : shards) {
    std::map<std::tuple<std::string, std::string, int>, std::size_t> last;  // (op, impl, repeat) -> last case
    for (const auto& t : s->run.tests) {
      auto& g = graphs[t.id.op];
      const std::size_t n = g.node(t.id.case_id);
      const auto key = std::make_tuple(t.id.op, t.id.impl, t.id.repeat);
      if (auto it = last.find(key); it != last.end() && it->second != n) g.next[it->second].insert(n);
      last[key] = n;
    }
  }
  std::map<std::string, std::unordered_map<std::string, std::size_t>> ranks;
  for (auto& [op, g] : graphs) {
    std::vector<int> indegree(g.nodes.size(), 0);
    for (const auto& outs : g.next)
      for (auto m : outs) ++indegree[m];
    std::priority_queue<std::size_t, std::vector<std::size_t>, std::greater<>> ready;
    for (std::size_t i = 0; i < g.nodes.size(); ++i)
      if (indegree[i] == 0) ready.push(i);
    auto& rank = ranks[op];
    std::vector<bool> placed(g.nodes.size(), false);
    while (rank.size() < g.nodes.size()) {
      if (ready.empty()) {  // a cycle: the shards disagree; take the earliest seen that is left
        for (std::size_t i = 0; i < g.nodes.size(); ++i)
          if (!placed[i]) {
            indegree[i] = 0;
            ready.push(i);
            break;
          }
      }
      const std::size_t i = ready.top();
      ready.pop();
      if (placed[i]) continue;
      placed[i] = true;
      rank.emplace(g.nodes[i], rank.size());
      for (auto m : g.next[i])
        if (!placed[m] && --indegree[m] == 0) ready.push(m);
    }
  }
  return ranks;
}

// 1. Everything is checked before anything is built: one sweep, one split, each shard once,
// finished (or --allow-partial), none missing (or --allow-partial), no test in two shards.
struct CheckedShards {
  int count = 0;
  std::map<int, const ShardRun*> by_index;
  std::vector<const ShardRun*> shards;  // in index order (an input that is itself a merge, at its lowest index)
  bool all_there = true;
};
Expected<CheckedShards> check_shards(const std::vector<ShardRun>& input, const MergeOptions& options, MergeOutcome& out) {
  CheckedShards c;
  const ShardRun& first = input.front();
  c.count = covered(first.run).front().count;
  for (const auto& s : input) {
    const auto& r = s.run;
    if (r.schema_version != first.run.schema_version)
      return make_error(fmt::format("{}: schema_version {} differs from {}'s {}: results of different backendbench versions", s.where,
                                    r.schema_version, first.where, first.run.schema_version));
    if (input.size() > 1 && r.sweep_id.empty())
      return make_error(fmt::format("{}: no sweep_id: cannot tell which sweep it is a shard of", s.where));
    if (r.sweep_id != first.run.sweep_id)
      return make_error(fmt::format("{}: sweep_id '{}' differs from {}'s '{}': shards of different runs", s.where, r.sweep_id, first.where,
                                    first.run.sweep_id));
    for (const auto& sh : covered(r)) {
      if (sh.count != c.count)
        return make_error(fmt::format("{}: shard.count {} differs from {}'s {}: shards of different splits of the sweep", s.where,
                                      sh.count, first.where, c.count));
      if (auto [it, fresh] = c.by_index.emplace(sh.index, &s); !fresh)
        return make_error(fmt::format("{} and {} are both {} (shard.index {} given twice)", it->second->where, s.where, shard_name(sh),
                                      sh.index));
    }
    if (!finished(r)) {
      if (!options.allow_partial)
        return make_error(fmt::format("{}: complete is false: this shard did not finish (read from its results.jsonl); "
                                      "--allow-partial merges the tests it finished",
                                      s.where));
      out.warnings.push_back(fmt::format("{}: did not finish; merging the {} tests it finished", s.where, r.tests.size()));
    }
  }
  std::vector<std::string> missing;
  for (int i = 0; i < c.count; ++i)
    if (!c.by_index.count(i)) missing.push_back(shard_name({i, c.count}) + fmt::format(" (shard.index {})", i));
  if (!missing.empty()) {
    if (!options.allow_partial)
      return make_error(fmt::format("missing {}: pass its results too, or --allow-partial to merge without it", fmt::join(missing, ", ")));
    out.warnings.push_back(fmt::format("merged without {}", fmt::join(missing, ", ")));
  }
  c.all_there = missing.empty();
  for (const auto& [index, s] : c.by_index)
    if (std::find(c.shards.begin(), c.shards.end(), s) == c.shards.end()) c.shards.push_back(s);
  std::unordered_map<std::string, const ShardRun*> owner;
  for (const auto* s : c.shards)
    for (const auto& t : s->run.tests)
      if (auto [it, fresh] = owner.emplace(test_key(t), s); !fresh && it->second != s)
        return make_error(fmt::format("test {} is in both {} and {}: the shards overlap", test_key(t), it->second->where, s->where));
  return c;
}

// 2. The merged run's header: the lead shard's command, options, root and sweep.
void start_merged(const CheckedShards& c, RunRecord& m) {
  const RunRecord& lead = c.shards.front()->run;
  m.schema_version = lead.schema_version;
  m.command = lead.command;
  m.options = lead.options;
  m.root = lead.root;
  m.sweep_id = lead.sweep_id;
  m.shard = {0, 1};
  for (const auto& [index, s] : c.by_index) m.merged_shards.push_back({index, c.count});
  m.perf_p = lead.perf_p;
  m.score_rule = lead.score_rule;
  m.provenance = lead.provenance.is_object() ? lead.provenance : nlohmann::json::object();
  m.host = lead.host.is_object() ? lead.host : nlohmann::json::object();
  m.host.erase("hosts");
  m.phases = nlohmann::json::object();
  m.complete = c.all_there;
}

// What the shards' runs add up to, gathered shard by shard.
struct MergeGather {
  nlohmann::json hosts = nlohmann::json::array(), merged = nlohmann::json::array();
  std::set<std::string> devices_seen, commits;
};

// A shard's machine (its host, load, workers, devices): each as it was, named by its shard.
void gather_machine(const RunRecord& r, RunRecord& m, MergeGather& g) {
  for (const auto& sh : covered(r)) {
    const nlohmann::json host = r.host.is_object() && r.host.contains("hosts") ? nlohmann::json() : r.host;
    if (!host.is_null()) g.hosts.push_back({{"shard", sh.index}, {"host", host}});
  }
  if (r.host.is_object() && r.host.contains("hosts"))  // a merge merged again: its hosts as they were
    for (const auto& h : r.host["hosts"]) g.hosts.push_back(h);
  // Each shard's host, as it was: a disturbed shard is named as such (host_load.hpp).
  if (r.host_load.is_object() && r.host_load.contains("shards")) {
    for (const auto& h : r.host_load["shards"]) m.host_load["shards"].push_back(h);
  } else if (r.host_load.is_object() && !r.host_load.empty()) {
    auto h = r.host_load;
    h["shard"] = r.shard.index;
    m.host_load["shards"].push_back(std::move(h));
  }
  if (r.workers.is_array())
    for (auto w : r.workers) {
      if (w.is_object() && !w.contains("shard")) w["shard"] = r.shard.index;
      m.workers.push_back(std::move(w));
    }
  if (r.devices.is_array())
    for (const auto& d : r.devices)
      if (g.devices_seen.insert(d.dump()).second) m.devices.push_back(d);
}

// One shard into the merged run: its times, machine, ops and provenance.
void merge_shard(const ShardRun& s, RunRecord& m, MergeGather& g) {
  const auto& r = s.run;
  m.complete = m.complete && finished(r);
  m.repeats = std::max(m.repeats, r.repeats);
  if (!r.started_at.empty() && (m.started_at.empty() || r.started_at < m.started_at)) m.started_at = r.started_at;
  if (r.finished_at > m.finished_at) m.finished_at = r.finished_at;
  m.wall_time += r.wall_time;  // machine time over every shard, not the sweep's elapsed time
  m.measured_time += r.measured_time;
  if (r.phases.is_object())
    for (const auto& [k, v] : r.phases.items())
      if (v.is_number()) m.phases[k] = m.phases.value(k, 0.0) + v.get<double>();
  gather_machine(r, m, g);
  for (const auto& op : r.ops) {
    auto it = std::find_if(m.ops.begin(), m.ops.end(), [&](const OpReport& o) { return o.op == op.op; });
    if (it == m.ops.end()) {
      m.ops.push_back(op);
      continue;
    }
    append_unique(it->impls, op.impls);
    append_unique(it->warnings, op.warnings);
    append_unique(it->errors, op.errors);
    it->cases = std::max(it->cases, op.cases);
    if (it->baseline.empty()) it->baseline = op.baseline;
    if (it->reference.empty()) it->reference = op.reference;
  }
  if (r.provenance.is_object() && r.provenance.contains("tool") && r.provenance["tool"].is_object())
    g.commits.insert(r.provenance["tool"].value("commit", ""));
  if (r.provenance.is_object() && r.provenance.contains("merge") && r.provenance["merge"].contains("shards"))
    for (const auto& x : r.provenance["merge"]["shards"]) g.merged.push_back(x);
  else
    g.merged.push_back({{"shard", r.shard.index},
                        {"count", r.shard.count},
                        {"source", s.where},
                        {"command", r.command},
                        {"hostname", r.host.is_object() ? r.host.value("hostname", "") : ""},
                        {"started_at", r.started_at},
                        {"finished_at", r.finished_at},
                        {"complete", r.complete},
                        {"tests", r.tests.size()},
                        {"wall_time_s", r.wall_time}});
}

// 3. The tests in sweep order: op and implementation as the ops list them, then repeat, then case.
void order_tests(const std::vector<const ShardRun*>& shards, RunRecord& m) {
  std::unordered_map<std::string, std::size_t> op_rank;
  std::map<std::pair<std::string, std::string>, std::size_t> impl_rank;
  for (std::size_t o = 0; o < m.ops.size(); ++o) {
    op_rank.emplace(m.ops[o].op, o);
    for (std::size_t i = 0; i < m.ops[o].impls.size(); ++i) impl_rank.emplace(std::make_pair(m.ops[o].op, m.ops[o].impls[i]), i);
  }
  const auto cases = case_ranks(shards);
  using SortKey = std::tuple<std::size_t, std::string, std::size_t, std::string, int, std::size_t>;
  std::vector<std::pair<SortKey, const TestResult*>> keyed;
  const std::size_t last = static_cast<std::size_t>(-1);
  for (const auto* s : shards)
    for (const auto& t : s->run.tests) {
      const auto o = op_rank.find(t.id.op);
      const auto i = impl_rank.find({t.id.op, t.id.impl});
      keyed.emplace_back(SortKey{o == op_rank.end() ? last : o->second, t.id.op, i == impl_rank.end() ? last : i->second, t.id.impl, t.id.repeat,
                                 cases.at(t.id.op).at(t.id.case_id)},
                         &t);
    }
  std::stable_sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  m.tests.reserve(keyed.size());
  for (const auto& [key, t] : keyed) m.tests.push_back(*t);
}

}  // namespace

Expected<MergeOutcome> merge_shards(const std::vector<ShardRun>& input, const MergeOptions& options) {
  if (input.empty()) return make_error("no shards to merge");
  MergeOutcome out;
  auto checked = check_shards(input, options, out);
  if (!checked) return checked.error();
  RunRecord& m = out.run;
  start_merged(*checked, m);
  MergeGather g;
  for (const auto* s : checked->shards) merge_shard(*s, m, g);
  m.host["hosts"] = g.hosts;
  m.provenance["merge"] = {{"command", options.command}, {"shards", g.merged}};
  if (g.commits.size() > 1)
    out.warnings.push_back(fmt::format("the shards were run by different backendbench builds (commits {})", fmt::join(g.commits, ", ")));
  order_tests(checked->shards, m);
  rescore(m);
  return out;
}

}  // namespace bb
