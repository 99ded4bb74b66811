#include "cli/scontrol_hostlist.hpp"

#include <fstream>
#include <sstream>

#include "core/error.hpp"
#include "core/hostlist.hpp"

namespace drover::cli {

CommandResult scontrol_show_hostlist(const std::string& what, const std::string& arg,
                                     const std::map<std::string, std::string>& env) {
  CommandResult r;
  if (what == "hostnames") {
    std::string expr = arg;
    if (expr.empty())
      if (auto it = env.find("SLURM_NODELIST"); it != env.end()) expr = it->second;
    if (expr.empty()) {
      r.err = "scontrol: error: host list is empty\n";
      return r;  // Slurm exits 0 here
    }
    try {
      for (const auto& h : core::expand_hostlist(expr)) r.out += h + "\n";
    } catch (const core::ParseError&) {
      r.err = "Invalid hostlist: " + expr + "\n";
    }
    return r;
  }
  if (arg.empty()) {
    r.err = "invalid encode argument\n";
    r.rc = 1;
    return r;
  }
  // An absolute path names a file of host names (commas or new lines between them).
  std::string expr = arg;
  if (arg.front() == '/') {
    std::ifstream in(arg);
    if (in) {
      std::stringstream text;
      text << in.rdbuf();
      expr = text.str();
    }
  }
  try {
    r.out = core::ranged_hostlist(core::expand_hostlist(expr), what == "hostlistsorted") + "\n";
  } catch (const core::ParseError&) {
    r.out.clear();
    r.err = "Invalid hostlist: " + arg + "\n";
    r.rc = 1;
  }
  return r;
}

}  // namespace drover::cli
