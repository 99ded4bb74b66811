#pragma once
// A batch job's supervisor (Slurm's slurmstepd): `droverd --stepd`, started by the agent for
// each batch job it launches, in a session of its own so that it outlives the agent (a crash,
// `kill -9`, an upgrade, SIGTERM). It forks the batch shell, waits for it, carries out the
// signals and kill sequences it is told, collects the job's usage, and records the exit in the
// node's exit store (<spool>/exits) itself, before it goes: an exit is never lost for want of a
// live agent. It listens on <spool>/stepd/job<id>.sock (stepd_proto.hpp) so that a restarted
// agent finds it and adopts the job.
#include <string>

namespace drover::agent {

// The supervisor's whole life. `link_fd` is its end of the link the agent made for it, whose
// first frame is the job's stepd::Launch; `listen_fd` its socket (listen_socket). Returns the
// process's exit code.
int run_supervisor(int link_fd, int listen_fd, const std::string& spool_dir);

// The job's supervisor socket, bound and listening (a stale one of a dead supervisor replaced).
// Made by the agent before the supervisor starts: from the moment a job may run, a new agent
// finds its supervisor. Throws std::runtime_error.
int listen_socket(const std::string& spool_dir, uint64_t job_id);

// Starts a supervisor for a job: fork, then exec of this program (/proc/self/exe, so an agent
// whose binary was replaced starts its own version) with `--stepd`, the link as fd 3 and the
// listening socket as fd 4. Returns the agent's end of the link (the caller sends the Launch)
// and the supervisor's pid. Throws std::runtime_error.
struct SupervisorLink {
  int fd;
  int pid;
};
SupervisorLink start_supervisor(const std::string& spool_dir, uint64_t job_id);

}  // namespace drover::agent
