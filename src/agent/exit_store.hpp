#pragma once
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "agent/proctrack.hpp"

namespace drover::agent {

// How a job's batch shell ended, as the agent reports it until the controller acknowledges it.
struct ExitRecord {
  int status;
  uint32_t run;
  ProcTrack::Usage usage;  // OOM kills and peak memory, when the host tells them
};

// A record's fields, as the agent stores them and sends them (an exit report adds its type):
// OOM kills and peak memory (bytes) only when known.
nlohmann::json exit_record_json(uint64_t job_id, const ExitRecord& e);

// The exits an agent has not yet seen acknowledged, on disk (<spool>/exits/<job id>, 0600),
// so that they outlive the agent: a job whose shell ended just before its agent was killed is
// reported by the next agent of the node, not taken as cut short and run again.
class ExitStore {
 public:
  explicit ExitStore(std::string dir) : dir_(std::move(dir)) {}
  // Creates the directory (0700). Throws if it cannot.
  void open() const;
  // Written to a temporary name and renamed over the job's record: whole or absent after the
  // agent's death. Not fsync'ed: what it guards against is the agent dying, which leaves the
  // page cache; a host crash also ends the job's processes, and the job is then requeued as
  // after any node failure (an fsync here cost ~11 ms per exit on the agent's I/O thread).
  // False (logged) if the disk refused.
  bool save(uint64_t job_id, const ExitRecord& e) const;
  // The job's record, once acknowledged. A removal lost in a crash only repeats a report the
  // controller has already applied (it ignores it, and acknowledges it again).
  void remove(uint64_t job_id) const;
  // Every record left; a file that cannot be read or parsed is logged and skipped.
  std::map<uint64_t, ExitRecord> load() const;
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
};

}  // namespace drover::agent
