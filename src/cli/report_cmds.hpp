#pragma once
// sprio and sshare as functions of their arguments and of what the controller answers, so
// tests can run them against canned replies. sprio_main and sshare_main run them for real.
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace drover::cli {

using nlohmann::json;

// What a command needs from the world.
struct CommandEnv {
  // One request to the controller; throws ControllerUnreachable.
  std::function<json(const json&)> call;
  // A user name (or a uid written as a number, when that uid exists) to its uid.
  std::function<std::optional<uint32_t>(const std::string&)> uid_of;
  // A uid to its user name.
  std::function<std::optional<std::string>(uint32_t)> name_of;
  std::string user;                        // who runs the command
  std::map<std::string, std::string> env;  // the environment variables the command reads
};

// The real controller, password database, caller and environment.
CommandEnv system_env();

struct CommandResult {
  std::string out, err;
  int rc = 0;
};

// Asks the controller for what the command reports ("priority factors", "shares"). On
// failure: Slurm's "Couldn't get <what> from controller: ..." in `res`, exit 255, nullopt.
std::optional<json> query_controller(const CommandEnv& env, const json& req,
                                     const std::string& what, CommandResult& res);

CommandResult run_sprio(const std::vector<std::string>& args, const CommandEnv& env);
CommandResult run_sshare(const std::vector<std::string>& args, const CommandEnv& env);

}  // namespace drover::cli
