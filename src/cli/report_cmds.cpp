// sprio and sshare against the real world: the controller, the password database, the caller.
#include "cli/report_cmds.hpp"

#include <poll.h>
#include <pwd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <ctime>
#include <iostream>

#include "cli/client.hpp"
#include "cli/commands.hpp"
#include "cli/sacctmgr.hpp"
#include "cli/sreport.hpp"

namespace drover::cli {
namespace {

std::optional<std::string> user_name(uint32_t uid) {
  if (struct passwd* pw = ::getpwuid(uid)) return std::string(pw->pw_name);
  return std::nullopt;
}

// Slurm's uid_from_string: a user name, or the number of an existing uid.
std::optional<uint32_t> user_id(const std::string& name) {
  if (struct passwd* pw = ::getpwnam(name.c_str())) return pw->pw_uid;
  if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos || name.size() > 10)
    return std::nullopt;
  const unsigned long uid = std::strtoul(name.c_str(), nullptr, 10);
  if (uid > 0xfffffffeUL || !user_name(static_cast<uint32_t>(uid))) return std::nullopt;
  return static_cast<uint32_t>(uid);
}

// Complaints first: they come before the table in nearly every case (sprio -S is the odd one).
int emit(const CommandResult& r) {
  std::cerr << r.err << std::flush;
  std::cout << r.out << std::flush;
  return r.rc;
}

}  // namespace

std::optional<json> query_controller(const CommandEnv& env, const json& req,
                                     const std::string& what, CommandResult& res) {
  json reply;
  try {
    reply = env.call(req);
  } catch (const ControllerUnreachable&) {
    res.err += "Couldn't get " + what +
               " from controller: Unable to contact slurm controller (connect failure)\n";
    res.rc = 255;
    return std::nullopt;
  }
  if (!reply.value("ok", false)) {
    res.err += "Couldn't get " + what +
               " from controller: " + reply.value("error", std::string("Unknown error")) + "\n";
    res.rc = 255;
    return std::nullopt;
  }
  return reply;
}

CommandEnv system_env() {
  CommandEnv e;
  e.call = [](const json& request) { return call_controller(request); };
  e.uid_of = user_id;
  e.name_of = user_name;
  e.full_name_of = [](const std::string& name) -> std::optional<std::string> {
    if (struct passwd* pw = ::getpwnam(name.c_str()))
      return std::string(pw->pw_gecos ? pw->pw_gecos : "");
    return std::nullopt;
  };
  e.user = user_name(::getuid()).value_or("");
  for (const char* key : {"SPRIO_FORMAT", "SREPORT_TRES", "SREPORT_CLUSTER"})
    if (const char* v = std::getenv(key)) e.env[key] = v;
  e.answer = [](CommandResult& printed, int timeout_s) {
    std::cerr << printed.err << std::flush;
    std::cout << printed.out << std::flush;
    printed.err.clear();
    printed.out.clear();
    pollfd p{STDIN_FILENO, POLLIN, 0};
    int ready;
    do ready = ::poll(&p, 1, timeout_s * 1000);
    while (ready < 0 && errno == EINTR);
    if (ready <= 0) return -2;
    unsigned char c;
    const ssize_t n = ::read(STDIN_FILENO, &c, 1);
    return n == 1 ? static_cast<int>(c) : -1;
  };
  return e;
}

int sprio_main(const std::vector<std::string>& args) { return emit(run_sprio(args, system_env())); }

int sshare_main(const std::vector<std::string>& args) {
  return emit(run_sshare(args, system_env()));
}

int sacctmgr_main(const std::vector<std::string>& args) {
  return emit(run_sacctmgr(args, system_env()));
}

int sreport_main(const std::vector<std::string>& args) {
  return emit(run_sreport(args, system_env(), static_cast<int64_t>(std::time(nullptr))));
}

}  // namespace drover::cli
