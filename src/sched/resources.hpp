#pragma once
// The engine's resource model for one pass: what each node has, what is free on it now, and
// which CPU and GPU ids are taken. Built from the controller's nodes and running jobs.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/gres.hpp"
#include "core/job.hpp"
#include "core/node.hpp"

namespace drover::sched {

inline constexpr int kMaxGresKinds = 12;

// The (name, type) pairs of generic resources that the cluster's nodes have, numbered; a
// MIG slice is a GPU type like any other ("gpu", "1g.10gb").
class GresKinds {
 public:
  // The kind's number, added if new; -1 when the table is full (such a resource is then
  // invisible to the engine: nothing asking for it can be placed).
  int intern(const std::string& name, const std::string& type);
  int find(const std::string& name, const std::string& type) const;  // -1: unknown
  // Bit mask of the kinds a request may draw from: its name, and its type if it names one.
  uint32_t matching(const core::GresCount& want) const;
  size_t size() const { return kinds_.size(); }
  const std::pair<std::string, std::string>& kind(int k) const { return kinds_[k]; }

 private:
  std::vector<std::pair<std::string, std::string>> kinds_;
};

// An amount of node resources: CPUs, memory and one count per GRES kind.
struct Amount {
  int32_t cpus = 0;
  int64_t mem_mb = 0;
  std::array<int32_t, kMaxGresKinds> gres{};

  Amount& operator+=(const Amount& o);
  Amount& operator-=(const Amount& o);
  // Componentwise minimum: what is free throughout two periods.
  static Amount min(const Amount& a, const Amount& b);
  int64_t gres_in(uint32_t mask) const;
  bool covers(const Amount& need) const;  // every component >= need's
};

// An Amount's components as Request::Floor reads them (other ways of keeping amounts give
// the same three).
inline int32_t cpus_of(const Amount& a) { return a.cpus; }
inline int64_t mem_of(const Amount& a) { return a.mem_mb; }
inline int32_t gres_of(const Amount& a, int kind) { return a.gres[kind]; }

// One node as this pass sees it.
struct NodeSlot {
  const core::Node* node = nullptr;
  bool usable = false;  // registered, up, not draining
  Amount total;         // what it has
  Amount free_now;      // what running jobs leave
  int running_jobs = 0;
  std::vector<bool> cpu_taken;  // per CPU id
  // Per GRES kind: the device indices it has there (GPUs are numbered across kinds in Gres=
  // order) and which of them are taken.
  std::array<std::vector<uint16_t>, kMaxGresKinds> devices;
  std::vector<bool> gpu_taken;  // per GPU index on the node
};

// Amount of a set of GRES counts on a node (kinds it lacks are ignored).
Amount gres_amount(const GresKinds& kinds, const std::vector<core::GresCount>& items);

// Builds the pass's node slots: capacity from each node's config, and what its running jobs
// hold (counts from the nodes; CPU and GPU ids from the running jobs' allocations).
std::vector<NodeSlot> build_slots(const std::vector<const core::Node*>& nodes,
                                  const std::vector<const core::Job*>& running, GresKinds& kinds);
// The same into `slots`, reusing their memory, with `by_name` the index of `nodes` by name.
void build_slots(const std::vector<const core::Node*>& nodes,
                 const std::vector<const core::Job*>& running, GresKinds& kinds,
                 const std::unordered_map<std::string_view, int>& by_name,
                 std::vector<NodeSlot>& slots);

// Chooses concrete ids for a share on a node: the lowest free CPU ids (whole cores first
// where threads_per_core > 1) and, per GRES kind taken, the lowest free GPU indices.
// Marks them taken in `slot`.
void pick_ids(NodeSlot& slot, const GresKinds& kinds, const Amount& use, core::NodeAlloc& out);

}  // namespace drover::sched
