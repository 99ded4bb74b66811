#include "cli/allocation.hpp"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <iostream>
#include <thread>

#include "cli/client.hpp"
#include "core/duration.hpp"
#include "proto/json.hpp"
#include "proto/request.hpp"

namespace drover::cli {
namespace {
volatile std::sig_atomic_t g_interrupted = 0;
void on_interrupt(int) { g_interrupted = 1; }
}  // namespace

int test_only(const core::JobSpec& spec, const std::string& program) {
  std::optional<proto::Outcome<proto::SubmitReply>> outcome;
  try {
    outcome = ask(proto::SubmitRequest{.spec = spec, .test_only = true});
  } catch (const ControllerUnreachable&) {
    std::cerr << program
              << ": error: Unable to allocate resources: Unable to contact slurm controller "
                 "(connect failure)\n";
    return 1;
  }
  if (const proto::ErrorReply* refused = outcome->refusal()) {
    if (refused->bad_partition)
      std::cerr << program << ": error: invalid partition specified: " << *refused->bad_partition
                << '\n';
    std::cerr << "allocation failure: " << refused->error.message << '\n';
    return 1;
  }
  const proto::SubmitReply& plan = outcome->reply();
  std::cerr << program << ": Job " << plan.job_id << " to start at "
            << core::format_timestamp(plan.start.value_or(0)) << " using " << plan.cpus.value_or(0)
            << " processors on nodes " << plan.nodes.value_or("") << " in partition "
            << plan.partition.value_or("") << '\n';
  return 0;
}

std::optional<Allocation> allocate(const core::JobSpec& spec, const std::string& program,
                                   bool quiet, bool immediate) {
  std::optional<proto::Outcome<proto::SubmitReply>> outcome;
  try {
    outcome = submit_to_controller(proto::SubmitRequest{.spec = spec});
  } catch (const SubmitUnanswered& e) {
    std::cerr << program << ": error: Unable to allocate resources: " << unanswered_submission(e)
              << '\n';
    return std::nullopt;
  }
  if (const proto::ErrorReply* refused = outcome->refusal()) {
    // The detail line first, as sbatch prints it; then each command's own wording.
    if (refused->bad_partition)
      std::cerr << program << ": error: invalid partition specified: " << *refused->bad_partition
                << '\n';
    if (refused->detail) std::cerr << program << ": error: " << *refused->detail << '\n';
    std::cerr << program << ": error: "
              << (program == "salloc" ? "Job submit/allocate failed: "
                                      : "Unable to allocate resources: ")
              << refused->error.message << '\n';
    return std::nullopt;
  }
  Allocation a;
  a.job_id = outcome->reply().job_id;
  const std::string id = std::to_string(a.job_id);
  struct sigaction sa {
  }, old_int{}, old_term{};
  sa.sa_handler = on_interrupt;
  ::sigaction(SIGINT, &sa, &old_int);
  ::sigaction(SIGTERM, &sa, &old_term);
  auto restore = [&] {
    ::sigaction(SIGINT, &old_int, nullptr);
    ::sigaction(SIGTERM, &old_term, nullptr);
  };
  bool waited = false;
  auto delay = std::chrono::milliseconds(20);
  while (true) {
    if (g_interrupted) {
      restore();
      release_allocation(a.job_id, 1);
      std::cerr << program << ": Job allocation " << id << " has been revoked.\n";
      return std::nullopt;
    }
    json info;
    try {
      info = call_controller(proto::AllocationInfoRequest{.job_id = a.job_id});
    } catch (const ControllerUnreachable&) {
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      continue;
    }
    const std::string state = info.value("state", "");
    if (state == "RUNNING") {
      a.env = info.value("job_env", std::map<std::string, std::string>{});
      a.nodelist = info.value("nodelist", "");
      if (waited && !quiet)
        std::cerr << program << ": job " << id << " has been allocated resources\n";
      if (program == "salloc" && !quiet)
        std::cerr << "salloc: Granted job allocation " << id << '\n';
      restore();
      return a;
    }
    if (state != "PENDING") {
      restore();
      std::cerr << program << ": error: Job allocation " << id << " has been revoked.\n";
      return std::nullopt;
    }
    if (!waited && immediate) {
      // -I: the submission's own scheduling pass is the only chance; Slurm's wording.
      restore();
      release_allocation(a.job_id, 1);
      std::cerr << program << ": error: Unable to allocate resources: Requested nodes are busy\n";
      if (program == "salloc")
        std::cerr << "salloc: Job allocation " << id << " has been revoked.\n";
      return std::nullopt;
    }
    if (!waited) {  // the submission's own scheduling pass could not start it
      waited = true;
      if (program == "salloc" && !quiet)
        std::cerr << "salloc: Pending job allocation " << id << '\n';
      if (!quiet) std::cerr << program << ": job " << id << " queued and waiting for resources\n";
    }
    std::this_thread::sleep_for(delay);
    delay = std::min(delay * 2, std::chrono::milliseconds(500));
  }
}

std::string allocation_state(uint64_t job_id) {
  try {
    json info = call_controller(proto::AllocationInfoRequest{.job_id = job_id});
    return info.value("state", "UNKNOWN");
  } catch (const ControllerUnreachable&) {
    return "RUNNING";  // not known to be gone
  }
}

bool allocation_alive(uint64_t job_id) { return allocation_state(job_id) == "RUNNING"; }

void release_allocation(uint64_t job_id, int status) {
  try {
    call_controller(proto::AllocationCompleteRequest{.job_id = job_id, .status = status});
  } catch (const ControllerUnreachable&) {
  }
}

}  // namespace drover::cli
