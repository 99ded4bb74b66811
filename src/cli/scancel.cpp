// scancel: cancel or signal jobs.
#include <pwd.h>
#include <signal.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <sstream>

#include "cli/client.hpp"
#include "cli/commands.hpp"
#include "cli/getopt.hpp"
#include "cli/help.hpp"
#include "core/array_spec.hpp"
#include "core/error.hpp"
#include "core/text.hpp"
#include "proto/error.hpp"
#include "proto/request.hpp"

namespace drover::cli {
namespace {

// --usage and --help: Slurm 22.05's layout and option set, drover's words.
constexpr const char* kUsageText =
    "Usage: scancel [-A account] [--batch] [--full] [--interactive] [-n job_name]\n"
    "               [-p partition] [-Q] [-q qos] [-R reservation] [-s signal | integer]\n"
    "               [-t PENDING | RUNNING | SUSPENDED] [--usage] [-u user_name]\n"
    "               [--hurry] [-V] [-v] [-w hosts...] [--wckey=wckey]\n"
    "               [job_id[_array_id][.step_id]]\n";

constexpr const char* kHelpText =
    "Usage: scancel [OPTIONS] [job_id[_array_id][.step_id]]\n"
    "  -A, --account=account           only jobs charged to this account (drover: not yet)\n"
    "  -b, --batch                     signal the batch shell only\n"
    "  -f, --full                      signal the batch shell and every step\n"
    "  -H, --hurry                     skip burst buffer stage-out (drover: none)\n"
    "  -i, --interactive               ask before each job (drover: not yet)\n"
    "  -M, --clusters                  ask other clusters (needs slurmdbd)\n"
    "  -n, --name=job_name             only jobs with this name\n"
    "  -p, --partition=partition       only jobs in this partition\n"
    "  -Q, --quiet                     no warnings\n"
    "  -q, --qos=qos                   only jobs with this QOS (drover: not yet)\n"
    "  -R, --reservation=reservation   only jobs in this reservation (drover: not yet)\n"
    "      --sibling=cluster_name      a federated sibling job (drover: none)\n"
    "  -s, --signal=name | integer     send this signal instead of cancelling\n"
    "  -t, --state=states              only jobs in these states: PENDING, RUNNING,\n"
    "                                  SUSPENDED\n"
    "  -u, --user=user_name            only jobs of this user\n"
    "  -V, --version                   print the version and exit\n"
    "  -v, --verbose                   say what is done\n"
    "  -w, --nodelist                  only jobs on these nodes (drover: not yet)\n"
    "      --wckey=wckey               only jobs with this workload key (drover: not yet)\n"
    "\n"
    "Help options:\n"
    "  --help                          print this help\n"
    "  --usage                         print a short synopsis\n"
    "\n"
    "drover's scancel, compatible with Slurm 22.05's.\n";

enum LongOnly { kCtld = 0x100, kHelp, kMe, kSibling, kUsage, kWckey };

// scancel 22.05's long options (getopt_long: any unique prefix is taken too).
const std::vector<LongOption> kLongOptions = {
    {"account", ArgKind::Required, 'A'},
    {"batch", ArgKind::None, 'b'},
    {"ctld", ArgKind::None, kCtld},
    {"full", ArgKind::None, 'f'},
    {"help", ArgKind::None, kHelp},
    {"hurry", ArgKind::None, 'H'},
    {"interactive", ArgKind::None, 'i'},
    {"cluster", ArgKind::Required, 'M'},
    {"clusters", ArgKind::Required, 'M'},
    {"jobname", ArgKind::Required, 'n'},
    {"me", ArgKind::None, kMe},
    {"name", ArgKind::Required, 'n'},
    {"nodelist", ArgKind::Required, 'w'},
    {"partition", ArgKind::Required, 'p'},
    {"qos", ArgKind::Required, 'q'},
    {"quiet", ArgKind::None, 'Q'},
    {"reservation", ArgKind::Required, 'R'},
    {"sibling", ArgKind::Required, kSibling},
    {"signal", ArgKind::Required, 's'},
    {"state", ArgKind::Required, 't'},
    {"usage", ArgKind::None, kUsage},
    {"user", ArgKind::Required, 'u'},
    {"verbose", ArgKind::None, 'v'},
    {"version", ArgKind::None, 'V'},
    {"wckey", ArgKind::Required, kWckey},
};

// How an option not supported yet is named in the error.
std::string option_name(int id) {
  for (const LongOption& o : kLongOptions)
    if (o.id == id)
      return (id < 0x100 ? std::string("-") + static_cast<char>(id) + "/--" : "--") + o.name;
  return "?";
}

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

extern const CommandHelp kScancelHelp{
    "scancel", "cancels jobs or steps, or sends them a signal", kUsageText, kHelpText,
    "Options follow getopt_long's rules: any unique prefix of a long option is taken.\n\nThe "
    "options marked \"drover: not yet\" in the list are refused with a message naming them, so "
    "that no job is cancelled by a filter drover would not apply. -M/--clusters needs slurmdbd."};

int scancel_main(const std::vector<std::string>& args) {
  proto::CancelRequest req;
  std::vector<std::string> ids;
  std::vector<proto::StepRef> steps;
  bool verbose = false, quiet = false;
  int unsupported = 0;  // the first option given that drover does not act on yet
  const ParsedArgs parsed =
      parse_options("scancel", args, "A:bfHiM:n:p:Qq:R:s:t:u:vVw:", kLongOptions);
  for (const ParsedOption& o : parsed.options) {
    const std::string value = o.value.value_or("");
    switch (o.id) {
      case 'v':
        verbose = true;
        break;
      case 'Q':
        quiet = true;
        break;
      case 'b':
        req.batch = true;
        break;
      case 'f':
        req.full = true;
        break;
      case kMe:
        req.uid = ::getuid();
        break;
      case 'u': {
        struct passwd* pw = ::getpwnam(value.c_str());
        if (pw == nullptr) {
          std::cerr << "scancel: error: Invalid user name: " << value << '\n';
          return 1;
        }
        req.uid = pw->pw_uid;
        break;
      }
      case 's': {
        const int sig = signal_number(value);
        if (sig < 0) {
          std::cerr << "scancel: error: Unknown job signal: " << value << '\n';
          return 1;
        }
        req.signal = sig;
        break;
      }
      case 'n':
        req.name = value;
        break;
      case 'p':
        req.partition = value;
        break;
      case 't': {
        std::vector<std::string> states;
        std::stringstream in(value);
        std::string st;
        while (std::getline(in, st, ',')) {
          const std::string upper = core::to_upper(st);
          if (upper != "PENDING" && upper != "PD" && upper != "RUNNING" && upper != "R" &&
              upper != "SUSPENDED" && upper != "S") {
            std::cerr << "Invalid job state specified: " << st << '\n'
                      << "Valid job states are PENDING, RUNNING, and SUSPENDED\n";
            return 1;
          }
          states.push_back(st);
        }
        req.states = states;
        break;
      }
      case 'M':
        std::cerr << cluster_unreachable("scancel", value);
        return 1;
      case 'A':
      case 'q':
      case 'R':
      case 'w':
      case 'i':
      case kWckey:
      case kSibling:
        if (unsupported == 0) unsupported = o.id;
        break;
      case 'V':
        std::cout << version_text();
        return 0;
      case kHelp:
        std::cout << kHelpText;
        return 0;
      case kUsage:
        std::cout << kUsageText;
        return 0;
      default:  // -H (no burst buffers), --ctld (always the controller)
        break;
    }
  }
  if (!parsed.error.empty()) {
    std::cerr << parsed.error << '\n' << try_help("scancel");
    return 1;
  }
  // Options drover does not act on yet, said once the whole line is known good.
  if (unsupported != 0) {
    std::cerr << "scancel: error: " << option_name(unsupported)
              << " is not supported by drover yet\n";
    return 1;
  }
  for (const std::string& a : parsed.operands) {
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
          steps.push_back({std::string(item), id32(job), static_cast<uint32_t>(id32(step))});
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
  if (ids.empty() && steps.empty() && !req.uid && !req.name && !req.partition && !req.states) {
    std::cerr << "scancel: error: No job identification provided\n";
    return 1;
  }
  req.jobs = ids;
  if (!steps.empty()) req.steps = steps;
  if (verbose)
    for (const auto& id : ids) std::cerr << "scancel: Terminating job " << id << '\n';
  std::optional<proto::Outcome<proto::JobsReply>> reply;
  try {
    reply = ask(req);
  } catch (const ControllerUnreachable&) {
    std::cerr << "scancel: error: Kill job error on job id: Unable to contact slurm controller "
                 "(connect failure)\n";
    return 1;
  }
  int rc = 0;
  if (!reply->ok()) return rc;  // refused as a whole: nothing was signalled
  for (const auto& [job, error] : (*reply)->errors) {
    // Like Slurm, jobs that are gone or already ending are only mentioned with -v.
    const bool benign =
        error.code == proto::Errno::kInvalidJobId || error.code == proto::Errno::kAlreadyDone;
    if (benign && !verbose) continue;
    if (!quiet || !benign)
      std::cerr << "scancel: error: Kill job error on job id " << job << ": " << error.message
                << '\n';
    if (error.code == proto::Errno::kAccessDenied) rc = kAccessDeniedExit;
  }
  return rc;
}

}  // namespace drover::cli
