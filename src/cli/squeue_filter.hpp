#pragma once
// Which jobs squeue shows: its filters (-j -u -p -n -A -q -w -t), the same for the text listing
// and for --json.
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "core/array_spec.hpp"

namespace drover::cli {

struct JobRow;

struct SqueueFilter {
  std::vector<core::JobRef> jobs;                                 // -j
  std::set<std::string> users, partitions, names, accounts, qos;  // -u -p -n -A -q
  std::vector<std::string> nodes;                                 // -w, expanded
  std::set<std::string> states;                                   // -t, as given

  // Reads -t's states (names or short codes, "all"); "" or Slurm's error line.
  std::string compile();
  // Whether squeue shows this job record (the controller's job view). Without -t only active
  // jobs pass, even those named with -j, as Slurm does.
  bool matches(const nlohmann::json& job) const;
  // The same for squeue's typed rows (squeue_rows.hpp).
  bool matches_row(const JobRow& job) const;

 private:
  std::set<std::string> want_states_;
  bool all_states_ = false;
};

}  // namespace drover::cli
