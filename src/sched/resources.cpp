#include "sched/resources.hpp"

#include <algorithm>
#include <string_view>
#include <unordered_map>

namespace drover::sched {

int GresKinds::find(const std::string& name, const std::string& type) const {
  for (size_t k = 0; k < kinds_.size(); ++k)
    if (kinds_[k].first == name && kinds_[k].second == type) return static_cast<int>(k);
  return -1;
}

int GresKinds::intern(const std::string& name, const std::string& type) {
  if (int k = find(name, type); k >= 0) return k;
  if (kinds_.size() >= kMaxGresKinds) return -1;
  kinds_.emplace_back(name, type);
  return static_cast<int>(kinds_.size() - 1);
}

uint32_t GresKinds::matching(const core::GresCount& want) const {
  uint32_t mask = 0;
  for (size_t k = 0; k < kinds_.size(); ++k)
    if (kinds_[k].first == want.name && (want.type.empty() || kinds_[k].second == want.type))
      mask |= 1u << k;
  return mask;
}

Amount& Amount::operator+=(const Amount& o) {
  cpus += o.cpus;
  mem_mb += o.mem_mb;
  for (int k = 0; k < kMaxGresKinds; ++k) gres[k] += o.gres[k];
  return *this;
}

Amount& Amount::operator-=(const Amount& o) {
  cpus -= o.cpus;
  mem_mb -= o.mem_mb;
  for (int k = 0; k < kMaxGresKinds; ++k) gres[k] -= o.gres[k];
  return *this;
}

Amount Amount::min(const Amount& a, const Amount& b) {
  Amount m;
  m.cpus = std::min(a.cpus, b.cpus);
  m.mem_mb = std::min(a.mem_mb, b.mem_mb);
  for (int k = 0; k < kMaxGresKinds; ++k) m.gres[k] = std::min(a.gres[k], b.gres[k]);
  return m;
}

int64_t Amount::gres_in(uint32_t mask) const {
  int64_t n = 0;
  for (int k = 0; mask != 0; ++k, mask >>= 1)
    if (mask & 1u) n += gres[k];
  return n;
}

bool Amount::covers(const Amount& need) const {
  if (cpus < need.cpus || mem_mb < need.mem_mb) return false;
  for (int k = 0; k < kMaxGresKinds; ++k)
    if (gres[k] < need.gres[k]) return false;
  return true;
}

Amount gres_amount(const GresKinds& kinds, const std::vector<core::GresCount>& items) {
  Amount a;
  for (const auto& g : items)
    if (int k = kinds.find(g.name, g.type); k >= 0) a.gres[k] += static_cast<int32_t>(g.count);
  return a;
}

std::vector<NodeSlot> build_slots(const std::vector<const core::Node*>& nodes,
                                  const std::vector<const core::Job*>& running, GresKinds& kinds) {
  std::unordered_map<std::string_view, int> by_name;
  by_name.reserve(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i)
    if (nodes[i] != nullptr) by_name.emplace(nodes[i]->name, static_cast<int>(i));
  std::vector<NodeSlot> slots;
  build_slots(nodes, running, kinds, by_name, slots);
  return slots;
}

void build_slots(const std::vector<const core::Node*>& nodes,
                 const std::vector<const core::Job*>& running, GresKinds& kinds,
                 const std::unordered_map<std::string_view, int>& by_name,
                 std::vector<NodeSlot>& slots) {
  slots.resize(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    NodeSlot& s = slots[i];
    if (nodes[i] == nullptr) {
      // No node has this id (now): nothing there, and no partition or plan names it.
      s = NodeSlot{};
      continue;
    }
    const core::Node& n = *nodes[i];
    s.node = &n;
    s.usable = n.schedulable();
    s.total = Amount{};
    s.total.cpus = n.cpus;
    s.total.mem_mb = n.real_memory_mb;
    for (auto& d : s.devices) d.clear();
    uint16_t gpu_index = 0;
    for (const auto& g : n.gres_total) {
      const int k = kinds.intern(g.name, g.type);
      if (k < 0) continue;
      s.total.gres[k] += static_cast<int32_t>(g.count);
      if (g.name == "gpu")
        for (int64_t c = 0; c < g.count; ++c) s.devices[k].push_back(gpu_index++);
    }
    s.gpu_taken.assign(gpu_index, false);
    s.cpu_taken.assign(static_cast<size_t>(std::max(0, n.cpus)), false);
    s.free_now = s.total;
    s.free_now.cpus -= n.alloc_cpus;
    s.free_now.mem_mb -= n.alloc_mem_mb;
    s.free_now -= gres_amount(kinds, n.gres_used);
    s.running_jobs = n.running_jobs;
  }
  // Ids held by running jobs. Allocations made before ids were recorded have none: their
  // CPUs are then taken lowest first so that counts and ids agree.
  for (const core::Job* job : running)
    for (const auto& a : job->alloc) {
      auto it = by_name.find(a.node);
      if (it == by_name.end()) continue;
      NodeSlot& s = slots[static_cast<size_t>(it->second)];
      if (!a.cpu_ids.empty()) {
        for (uint16_t c : a.cpu_ids)
          if (c < s.cpu_taken.size()) s.cpu_taken[c] = true;
      } else {
        int left = a.cpus;
        for (size_t c = 0; c < s.cpu_taken.size() && left > 0; ++c)
          if (!s.cpu_taken[c]) {
            s.cpu_taken[c] = true;
            --left;
          }
      }
      for (uint16_t g : a.gpu_ids)
        if (g < s.gpu_taken.size()) s.gpu_taken[g] = true;
    }
}

void pick_ids(NodeSlot& slot, const GresKinds& kinds, const Amount& use, core::NodeAlloc& out) {
  const core::Node& n = *slot.node;
  const int tpc = std::max(1, n.threads_per_core);
  int want = use.cpus;
  // Whole free cores first (all their threads free), then any free CPU.
  for (size_t core = 0; core * tpc < slot.cpu_taken.size() && want >= tpc; ++core) {
    bool all_free = true;
    for (int t = 0; t < tpc; ++t) all_free = all_free && !slot.cpu_taken[core * tpc + t];
    if (!all_free) continue;
    for (int t = 0; t < tpc; ++t) {
      slot.cpu_taken[core * tpc + t] = true;
      out.cpu_ids.push_back(static_cast<uint16_t>(core * tpc + t));
    }
    want -= tpc;
  }
  for (size_t c = 0; c < slot.cpu_taken.size() && want > 0; ++c)
    if (!slot.cpu_taken[c]) {
      slot.cpu_taken[c] = true;
      out.cpu_ids.push_back(static_cast<uint16_t>(c));
      --want;
    }
  std::sort(out.cpu_ids.begin(), out.cpu_ids.end());
  for (size_t k = 0; k < kinds.size(); ++k) {
    if (use.gres[k] <= 0) continue;
    out.gres.push_back({kinds.kind(static_cast<int>(k)).first,
                        kinds.kind(static_cast<int>(k)).second, use.gres[k]});
    int left = use.gres[k];
    for (uint16_t d : slot.devices[k]) {
      if (left == 0) break;
      if (slot.gpu_taken[d]) continue;
      slot.gpu_taken[d] = true;
      out.gpu_ids.push_back(d);
      --left;
    }
  }
  std::sort(out.gpu_ids.begin(), out.gpu_ids.end());
}

}  // namespace drover::sched
