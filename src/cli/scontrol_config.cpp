#include "cli/scontrol_config.hpp"

#include "core/duration.hpp"

namespace drover::cli {

namespace {

// "KillWait                = 30 sec": keys padded to 23 columns, longer ones as they are.
void print_lines(const json& lines, std::string& out) {
  for (const auto& kv : lines) {
    const std::string key = kv.at(0).get<std::string>();
    const std::string value = kv.at(1).get<std::string>();
    out += key + std::string(key.size() < 23 ? 23 - key.size() : 0, ' ') + " = " + value + "\n";
  }
}

}  // namespace

CommandResult scontrol_show_config(const json& reply) {
  CommandResult r;
  if (!reply.value("ok", false)) {
    r.err =
        "slurm_load_ctl_conf error: " + reply.value("error", std::string("Unknown error")) + "\n";
    r.rc = 1;
    return r;
  }
  const json& config = reply.at("config");
  r.out =
      "Configuration data as of " + core::format_timestamp(reply.value("now", int64_t{0})) + "\n";
  print_lines(config.at("main"), r.out);
  r.out += "\nMPI Plugins Configuration:\n";
  print_lines(config.at("mpi"), r.out);
  r.out += "\nSlurmctld(primary) at " + reply.value("control_host", std::string("localhost")) +
           " is UP\n";
  return r;
}

}  // namespace drover::cli
