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
// first frame is a batch job's stepd::Launch, or an srun step's stepd::StepLaunch (srun's link
// then `srun_fd`); `listen_fd` its socket (listen_socket). Returns the process's exit code.
int run_supervisor(int link_fd, int listen_fd, const std::string& spool_dir, int srun_fd = -1);

// A supervisor's socket at `path` (stepd_proto.hpp), bound and listening (a stale one of a dead
// supervisor replaced). Made by the agent before the supervisor starts: from the moment a job
// may run, a new agent finds its supervisor. Throws std::runtime_error.
int listen_socket(const std::string& path);

// Starts a supervisor: fork, then exec of this program (/proc/self/exe, so an agent whose
// binary was replaced starts its own version) with `--stepd`, the link as fd 3, the listening
// socket as fd 4 and (for a step) srun's link as fd 5. Returns the agent's end of the link (the
// caller sends the Launch or StepLaunch) and the supervisor's pid. Throws std::runtime_error.
struct SupervisorLink {
  int fd;
  int pid;
};
SupervisorLink start_supervisor(const std::string& spool_dir, const std::string& socket_path,
                                int srun_fd = -1);

}  // namespace drover::agent
