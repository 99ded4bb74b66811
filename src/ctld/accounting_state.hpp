#pragma once
#include <cstdint>
#include <optional>

#include "core/acct_data.hpp"
#include "sched/fairshare.hpp"
#include "sched/limits.hpp"

namespace drover::ctld {

// The controller's accounting state: the accounting entities (accounts, users, associations,
// QOS) the limits are built from, a count of the changes installed (sacctmgr's preview is
// committed only on the data it was made on), the fair-share tree with each association's
// decayed usage, and the submitted-job counters the submit limits are checked against.
// The limits themselves live in Config; the rules over all this are priority.cpp,
// accounting.cpp and acct_admin.cpp.
class AccountingState {
 public:
  // None: no accounts (every user charges root).
  const std::optional<core::AcctData>& data() const { return data_; }
  uint64_t generation() const { return generation_; }
  // The entities slurm.conf's accounting file gives at start (not a change).
  void load(core::AcctData data) { data_ = std::move(data); }
  // A change of the entities (sacctmgr, or the store's copy at start): a new generation.
  void install(core::AcctData data) {
    data_ = std::move(data);
    ++generation_;
  }

  sched::AssocTree& tree() { return tree_; }
  const sched::AssocTree& tree() const { return tree_; }
  void set_tree(sched::AssocTree tree) { tree_ = std::move(tree); }

  // Submitted (not finished) jobs per association and QOS; null once forgotten, until the
  // rules count them again (jobs ended, moved, or the limits changed).
  sched::Limits::Usage* submit_usage() { return submit_usage_ ? &*submit_usage_ : nullptr; }
  void set_submit_usage(sched::Limits::Usage usage) { submit_usage_ = std::move(usage); }
  void forget_submit_usage() { submit_usage_.reset(); }

 private:
  std::optional<core::AcctData> data_;
  uint64_t generation_ = 0;
  sched::AssocTree tree_;
  std::optional<sched::Limits::Usage> submit_usage_;
};

}  // namespace drover::ctld
