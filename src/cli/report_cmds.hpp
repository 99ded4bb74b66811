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

struct CommandResult;

// What a command needs from the world.
struct CommandEnv {
  // One request to the controller; throws ControllerUnreachable.
  std::function<json(const json&)> call;
  // A user name (or a uid written as a number, when that uid exists) to its uid.
  std::function<std::optional<uint32_t>(const std::string&)> uid_of;
  // A uid to its user name.
  std::function<std::optional<std::string>(uint32_t)> name_of;
  // A user's full name (the password database's GECOS field).
  std::function<std::optional<std::string>(const std::string&)> full_name_of;
  std::string user;                        // who runs the command
  std::map<std::string, std::string> env;  // the environment variables the command reads
  // An answer typed at a question (sacctmgr's "Would you like to commit changes?"): shows what
  // the command printed so far (and takes it out of `printed`), then reads one character
  // within `timeout_s` seconds; -1 at the end of the input, -2 when the time ran out.
  std::function<int(CommandResult& printed, int timeout_s)> answer;
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
