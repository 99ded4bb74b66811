// scontrol update PartitionName=...: Slurm 22.05's scontrol refuses bad values itself, each
// with its own wording (and, for some, the "slurm_update error: No error" of a call it never
// made); the controller checks the partition, the nodes and the caller.
#include "cli/scontrol_partition.hpp"

#include <charconv>
#include <cstdlib>
#include <iostream>
#include <optional>

#include "cli/client.hpp"
#include "core/duration.hpp"
#include "core/error.hpp"
#include "core/hostlist.hpp"
#include "core/text.hpp"

namespace drover::cli {

namespace {

constexpr const char* kNoError = "slurm_update error: No error\n";

// A decimal count without sign; nullopt when not one (Slurm's "Invalid numeric value"),
// `too_big` set when it does not fit (Slurm's "Numeric argument (N) to big").
std::optional<int64_t> parse_count(const std::string& v, bool& too_big) {
  too_big = false;
  if (v.empty() || v.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  int64_t n = 0;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (ec == std::errc::result_out_of_range || n > 0x7fffffff) {
    too_big = true;
    return std::nullopt;
  }
  if (ec != std::errc() || end != v.data() + v.size()) return std::nullopt;
  return n;
}

}  // namespace

std::optional<CommandResult> job_update_number_error(const std::string& key_raw,
                                                     const std::string& value) {
  const std::string key = core::to_lower(key_raw);
  bool too_big = false;
  if (key == "priority") {
    // Slurm keeps 0xfffffffe and up for itself.
    uint64_t n = 0;
    const bool digits =
        !value.empty() && value.find_first_not_of("0123456789") == std::string::npos;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
    if (!digits || ec != std::errc() || end != value.data() + value.size() || n > 4294967293ULL)
      return CommandResult{"", "scontrol: error: Invalid Priority value: " + value + "\n", 1};
  } else if (key == "nice") {
    int64_t n = 0;
    const char* first = value.data() + (!value.empty() && value[0] == '+' ? 1 : 0);
    auto [end, ec] = std::from_chars(first, value.data() + value.size(), n);
    (void)end;
    if (ec == std::errc::result_out_of_range ||
        (ec == std::errc() && (n > 2147483645 || n < -2147483645)))
      return CommandResult{
          "", "scontrol: error: Nice value out of range (+/- 2147483645). Value ignored\n", 1};
  } else if (key == "numnodes" || key == "minnodes") {
    const auto dash = value.find('-');
    for (const std::string& part :
         {value.substr(0, dash), dash == std::string::npos ? "1" : value.substr(dash + 1)}) {
      if (parse_count(part, too_big)) continue;
      return CommandResult{"",
                           too_big ? "scontrol: error: Numeric argument (" + value +
                                         ") to big for requested node count.\n"
                                   : "scontrol: error: Invalid numeric value \"" + value +
                                         "\" for requested node count.\n",
                           0};
    }
  } else if (key == "numtasks" || key == "mincpusnode") {
    if (!parse_count(value, too_big))
      return CommandResult{"",
                           "scontrol: error: Invalid " +
                               std::string(key == "numtasks" ? "NumTasks" : "MinCPUsNode") +
                               " value: " + value + "\n",
                           1};
  }
  return std::nullopt;
}

PartitionUpdate parse_partition_update(const std::vector<std::string>& args) {
  PartitionUpdate u;
  proto::PartitionSettings set;
  std::string name;
  auto fail = [&](std::string err, int rc = 1) {
    u.request.reset();
    u.result = {"", std::move(err), rc};
    return u;
  };
  for (const auto& a : args) {
    const auto eq = a.find('=');
    const std::string key = core::to_lower(a.substr(0, eq));
    const std::string value = eq == std::string::npos ? "" : a.substr(eq + 1);
    const std::string upper = core::to_upper(value);
    if (eq == std::string::npos)
      return fail("scontrol: error: Update of this parameter is not supported: " + a +
                  "\n\nscontrol: error: Request aborted\n" + kNoError);
    if (key == "partitionname") {
      name = value;
    } else if (key == "state") {
      if (upper != "UP" && upper != "DOWN" && upper != "DRAIN" && upper != "INACTIVE")
        return fail("scontrol: error: Invalid input: " + a +
                    "\nscontrol: error: Acceptable State values are UP, DOWN, DRAIN and "
                    "INACTIVE\n" +
                    kNoError);
      set.state = upper;
    } else if (key == "maxtime" || key == "defaulttime") {
      try {
        const int64_t m = core::parse_time_limit_minutes(value);
        (key == "maxtime" ? set.max_time_min : set.default_time_min) = m;
      } catch (const core::ParseError&) {
        return fail("scontrol: error: Invalid input " + a + "\n" + kNoError);
      }
    } else if (key == "maxnodes") {
      if (upper == "UNLIMITED" || upper == "INFINITE") {
        set.max_nodes = -1;
        continue;
      }
      bool too_big = false;
      auto n = parse_count(value, too_big);
      if (too_big)
        return fail("scontrol: error: Numeric argument (" + value + ") to big for MaxNodes.\n");
      if (!n)
        return fail("scontrol: error: Invalid numeric value \"" + value + "\" for MaxNodes.\n");
      set.max_nodes = *n;
    } else if (key == "minnodes") {
      bool too_big = false;
      auto n = parse_count(value, too_big);
      // Slurm prints this and goes on, exit status 0 (then stores a garbage MinNodes).
      if (!n) {
        u.result.err += "scontrol: error: \"" + value + "\" is not a valid node count\n";
        continue;
      }
      set.min_nodes = *n;
    } else if (key == "priority" || key == "prioritytier" || key == "priorityjobfactor") {
      bool too_big = false;
      auto n = parse_count(value, too_big);
      // Both are 16-bit in Slurm; its largest values are reserved.
      if (!n || *n > 65533) {
        const std::string shown = key == "priority"       ? "Priority"
                                  : key == "prioritytier" ? "PriorityTier"
                                                          : "PriorityJobFactor";
        return fail("scontrol: error: Invalid " + shown + " value: " + value + "\n" + kNoError);
      }
      // Priority= sets both, as in Slurm 22.05.
      if (key != "priorityjobfactor") set.priority_tier = *n;
      if (key != "prioritytier") set.priority_job_factor = *n;
    } else if (key == "default" || key == "hidden") {
      const std::string shown = key == "default" ? "Default" : "Hidden";
      if (upper != "YES" && upper != "NO")
        return fail("scontrol: error: Invalid input: " + a + "\nscontrol: error: Acceptable " +
                    shown + " values are YES and NO\n" + kNoError);
      (key == "default" ? set.is_default : set.hidden) = upper == "YES";
    } else if (key == "nodes") {
      std::vector<std::string> nodes;
      if (!value.empty()) {
        try {
          nodes = core::expand_hostlist(value);
        } catch (const core::ParseError&) {
          return fail("slurm_update error: Invalid node name specified\n");
        }
      }
      set.nodes = std::move(nodes);
    } else {
      return fail("scontrol: error: Update of this parameter is not supported: " + a +
                  "\n\nscontrol: error: Request aborted\n" + kNoError);
    }
  }
  if (set == proto::PartitionSettings{}) {
    if (!u.result.err.empty()) return u;  // MinNodes=junk alone: Slurm's message, status 0
    return fail("scontrol: error: No changes specified\n");
  }
  u.request = proto::PartitionUpdateRequest{.name = name, .set = std::move(set)};
  return u;
}

int scontrol_partition_update(const std::vector<std::string>& args) {
  PartitionUpdate u = parse_partition_update(args);
  std::cerr << u.result.err;
  if (!u.request) return u.result.rc;
  const auto r = ask(*u.request);
  if (const proto::ErrorReply* refused = r.refusal()) {
    std::cerr << "slurm_update error: " << refused->error.message << '\n';
    return 1;
  }
  return 0;
}

}  // namespace drover::cli
