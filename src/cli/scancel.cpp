// scancel: cancel or signal jobs.
#include <pwd.h>
#include <signal.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <sstream>

#include "cli/args.hpp"
#include "cli/client.hpp"
#include "cli/commands.hpp"
#include "core/array_spec.hpp"
#include "core/error.hpp"

namespace drover::cli {
namespace {

// Slurm's scancel exits with the low byte of the Slurm error code of the last failure.
constexpr int kAccessDeniedExit = 2002 & 0xff;

int signal_number(const std::string& name) {
  std::string s = name;
  if (s.rfind("SIG", 0) == 0) s = s.substr(3);
  static const std::pair<const char*, int> kSignals[] = {
      {"HUP", SIGHUP},   {"INT", SIGINT},   {"QUIT", SIGQUIT}, {"KILL", SIGKILL}, {"USR1", SIGUSR1},
      {"USR2", SIGUSR2}, {"TERM", SIGTERM}, {"CONT", SIGCONT}, {"STOP", SIGSTOP}, {"TSTP", SIGTSTP},
      {"ALRM", SIGALRM}, {"URG", SIGURG},   {"XCPU", SIGXCPU},
  };
  for (const auto& [n, v] : kSignals)
    if (s == n) return v;
  try {
    size_t used = 0;
    int v = std::stoi(s, &used);
    if (used == s.size() && v > 0 && v < 65) return v;
  } catch (const std::exception&) {
  }
  return -1;
}

}  // namespace

int scancel_main(const std::vector<std::string>& args) {
  json req = {{"op", "cancel"}};
  json ids = json::array();
  json steps = json::array();
  bool verbose = false, quiet = false;
  ArgReader r("scancel", args);
  while (r.next()) {
    const std::string& a = r.arg();
    const std::string& value = r.value();
    if (a == "-v" || a == "--verbose")
      verbose = true;
    else if (a == "-Q" || a == "--quiet")
      quiet = true;
    else if (a == "-b" || a == "--batch")
      req["batch"] = true;
    else if (a == "-f" || a == "--full")
      req["full"] = true;
    else if (a == "--me")
      req["uid"] = ::getuid();
    else if (r.take("-u", "--user")) {
      struct passwd* pw = ::getpwnam(value.c_str());
      if (pw == nullptr) {
        std::cerr << "scancel: error: Invalid user name: " << value << '\n';
        return 1;
      }
      req["uid"] = pw->pw_uid;
    } else if (r.take("-s", "--signal")) {
      int sig = signal_number(value);
      if (sig < 0) {
        std::cerr << "scancel: error: Unknown job signal: " << value << '\n';
        return 1;
      }
      req["signal"] = sig;
    } else if (r.take("-n", "--name") || r.take("-J", "--jobname"))
      req["name"] = value;
    else if (r.take("-p", "--partition"))
      req["partition"] = value;
    else if (r.take("-t", "--state")) {
      json states = json::array();
      std::stringstream in(value);
      std::string s;
      while (std::getline(in, s, ',')) states.push_back(s);
      req["states"] = states;
    } else if (!a.empty() && a[0] == '-') {
      std::cerr << "scancel: unrecognized option '" << a << "'\n"
                << "Try \"scancel --help\" for more information\n";
      return 1;
    } else {
      try {
        // "36_4,37" is two references; "36_[1,3]" one; "36.0" a step.
        for (std::string_view item : core::split_job_ref_list(a)) {
          if (auto dot = item.find('.'); dot != std::string_view::npos) {
            const std::string job(item.substr(0, dot)), step(item.substr(dot + 1));
            if (job.empty() || step.empty() ||
                job.find_first_not_of("0123456789") != std::string::npos ||
                step.find_first_not_of("0123456789") != std::string::npos)
              throw core::ParseError("Invalid job id specified");
            // Read as Slurm's scancel reads them: saturated at 32 bits, not an abort.
            auto id32 = [](const std::string& digits) {
              return std::min<unsigned long long>(std::strtoull(digits.c_str(), nullptr, 10),
                                                  0xffffffffULL);
            };
            steps.push_back(
                {{"ref", std::string(item)}, {"job_id", id32(job)}, {"step_id", id32(step)}});
            continue;
          }
          // A job id too large for 32 bits names no job: Slurm's scancel asks, and says so
          // only with -v (exit status 0), as for any job that does not exist.
          if (item.find_first_not_of("0123456789") != std::string_view::npos ||
              item.find_first_not_of('0') == std::string_view::npos)
            (void)core::parse_job_ref(item);
          ids.push_back(std::string(item));
        }
      } catch (const core::ParseError&) {
        std::cerr << "scancel: error: Invalid job id " << a << '\n';
        return 1;
      }
    }
  }
  if (ids.empty() && steps.empty() && !req.contains("uid") && !req.contains("name") &&
      !req.contains("partition") && !req.contains("states")) {
    std::cerr << "scancel: error: No job identification provided\n";
    return 1;
  }
  req["jobs"] = ids;
  if (!steps.empty()) req["steps"] = steps;
  if (verbose)
    for (const auto& id : ids)
      std::cerr << "scancel: Terminating job " << id.get<std::string>() << '\n';
  json reply;
  try {
    reply = call_controller(req);
  } catch (const ControllerUnreachable&) {
    std::cerr << "scancel: error: Kill job error on job id: Unable to contact slurm controller "
                 "(connect failure)\n";
    return 1;
  }
  int rc = 0;
  for (const auto& e : reply.value("errors", json::array())) {
    const std::string error = e.value("error", "");
    // Like Slurm, jobs that are gone or already ending are only mentioned with -v.
    const bool benign =
        error == "Invalid job id specified" || error == "Job/step already completing or completed";
    if (benign && !verbose) continue;
    if (!quiet || !benign)
      std::cerr << "scancel: error: Kill job error on job id " << e.value("job", "") << ": "
                << error << '\n';
    if (error == "Access/permission denied") rc = kAccessDeniedExit;
  }
  return rc;
}

}  // namespace drover::cli
