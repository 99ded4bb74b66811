#pragma once
// Allocations held by a command rather than a batch shell (salloc, srun outside one): ask for
// one, wait for it with Slurm's messages, give it back.
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "core/job.hpp"

namespace drover::cli {

struct Allocation {
  uint64_t job_id = 0;
  std::map<std::string, std::string> env;  // SLURM_JOB_ID, SLURM_JOB_NODELIST, ...
  std::string nodelist;
};

// Submits `spec` (an interactive job) and waits until it runs. `program` ("srun"/"salloc")
// words the messages. On refusal or revocation prints the error and returns nothing.
// SIGINT/SIGTERM while waiting withdraw the request.
std::optional<Allocation> allocate(const core::JobSpec& spec, const std::string& program,
                                   bool quiet, bool immediate = false);

// --test-only: asks when and where `spec` would start, prints Slurm's answer ("<program>: Job
// N to start at ...", or "allocation failure: ...") and returns the exit status. No job is
// made.
int test_only(const core::JobSpec& spec, const std::string& program);

// Whether the job still runs (false once it was cancelled, timed out or ended), and its state
// ("RUNNING", "TIMEOUT", "CANCELLED", ...; RUNNING when the controller cannot be asked).
bool allocation_alive(uint64_t job_id);
std::string allocation_state(uint64_t job_id);

// Ends the allocation with the holder's result (a wait status).
void release_allocation(uint64_t job_id, int status);

}  // namespace drover::cli
