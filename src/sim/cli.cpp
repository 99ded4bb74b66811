#include "sim/cli.hpp"

#include <charconv>
#include <chrono>
#include <fstream>
#include <optional>
#include <stdexcept>

#include "core/error.hpp"
#include "sim/metrics.hpp"
#include "sim/replay.hpp"
#include "sim/swf.hpp"

namespace drover::sim {
namespace {

struct UsageError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

int positive(const std::string& option, const std::string& value) {
  int v = 0;
  auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (ec != std::errc() || p != value.data() + value.size() || v <= 0)
    throw UsageError(option + ": '" + value + "' is not a positive whole number");
  return v;
}

int whole(const std::string& option, const std::string& value) {
  int v = 0;
  auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (ec != std::errc() || p != value.data() + value.size() || v < 0)
    throw UsageError(option + ": '" + value + "' is not a whole number");
  return v;
}

}  // namespace

const char* sim_usage() {
  return "usage: drover sim TRACE [--nodes N] [--cpus-per-node C]\n"
         "                  [--policy fcfs|easy|conservative|multifactor] [--jobs-csv FILE]\n"
         "                  [--every-pass] [--scale static|keda|drover] [--min-nodes N]\n"
         "                  [--start-delay S] [--idle-timeout S] [--lookahead S]\n"
         "                  [--poll S] [--cooldown S]\n"
         "                  [--cost-per-node-hour X]\n"
         "Replays an SWF trace through the scheduling engine on a virtual clock and prints\n"
         "schedule quality (stdout, deterministic) and the engine's wall time (stderr).\n"
         "--jobs-csv writes id,submit,start,end,wait,run,procs,bsld per replayed job.\n"
         "--every-pass runs the engine at every event time, even where no job could start.\n"
         "--scale: static (every node all the time, the default), keda (replicas from the\n"
         "pending CPUs every --poll, default 30 s, scale-down after --cooldown, 300 s) or\n"
         "drover (the autoscaler; idle nodes go after --idle-timeout, 300 s); nodes take\n"
         "--start-delay (60 s) to come up; node-hours are reported with their cost.\n";
}

int sim_main(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  ReplayOptions opts;
  std::optional<std::string> trace_path, csv_path;
  try {
    for (size_t i = 0; i < args.size(); ++i) {
      std::string a = args[i];
      std::optional<std::string> inline_value;
      if (a.rfind("--", 0) == 0)
        if (size_t eq = a.find('='); eq != std::string::npos) {
          inline_value = a.substr(eq + 1);
          a.resize(eq);
        }
      auto value = [&]() -> std::string {
        if (inline_value) return *inline_value;
        if (i + 1 >= args.size()) throw UsageError(a + " needs a value");
        return args[++i];
      };
      if (a == "-h" || a == "--help") {
        out << sim_usage();
        return 0;
      } else if (a == "--nodes") {
        opts.nodes = positive(a, value());
      } else if (a == "--cpus-per-node") {
        opts.cpus_per_node = positive(a, value());
      } else if (a == "--policy") {
        std::string v = value();
        auto p = parse_sim_policy(v);
        if (!p)
          throw UsageError("--policy: '" + v + "' is not fcfs, easy, conservative or multifactor");
        opts.policy = *p;
      } else if (a == "--scale") {
        std::string v = value();
        auto p = parse_scale_policy(v);
        if (!p) throw UsageError("--scale: '" + v + "' is not static, keda or drover");
        opts.scale.policy = *p;
      } else if (a == "--min-nodes") {
        opts.scale.min_nodes = whole(a, value());
      } else if (a == "--start-delay") {
        opts.scale.start_delay_s = whole(a, value());
      } else if (a == "--idle-timeout") {
        opts.scale.idle_timeout_s = whole(a, value());
      } else if (a == "--lookahead") {
        opts.scale.lookahead_s = whole(a, value());
      } else if (a == "--poll") {
        opts.scale.poll_s = positive(a, value());
      } else if (a == "--cooldown") {
        opts.scale.cooldown_s = whole(a, value());
      } else if (a == "--cost-per-node-hour") {
        const std::string v = value();
        double x = 0;
        auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
        if (ec != std::errc() || p != v.data() + v.size() || !(x >= 0))
          throw UsageError(a + ": '" + v + "' is not a number at least 0");
        opts.scale.cost_per_node_hour = x;
      } else if (a == "--every-pass") {
        opts.skip_passes = false;
      } else if (a == "--jobs-csv") {
        csv_path = value();
      } else if (a.size() > 1 && a[0] == '-') {
        throw UsageError("unknown option " + a);
      } else if (trace_path) {
        throw UsageError("one trace only (" + *trace_path + ", " + a + ")");
      } else {
        trace_path = a;
      }
    }
    if (!trace_path) throw UsageError("no trace given");
  } catch (const UsageError& e) {
    err << "drover sim: " << e.what() << '\n' << sim_usage();
    return 2;
  }

  const auto t0 = std::chrono::steady_clock::now();
  ReplayResult r;
  try {
    SwfTrace trace = read_swf_file(*trace_path);
    r = replay(trace, opts);
  } catch (const std::invalid_argument& e) {
    err << "drover sim: " << e.what() << '\n';
    return 2;
  } catch (const std::logic_error& e) {
    err << "drover sim: engine fault: " << e.what() << '\n';
    return 1;
  } catch (const std::exception& e) {  // core::ParseError, unreadable file
    err << "drover sim: " << e.what() << '\n';
    return 1;
  }
  const Metrics m = compute_metrics(r.outcomes, r.cpus());
  const auto t1 = std::chrono::steady_clock::now();
  out << format_report(*trace_path, r, m);
  out.flush();
  err << format_timing(r, std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count());
  if (csv_path) {
    std::ofstream f(*csv_path, std::ios::binary | std::ios::trunc);
    f << format_jobs_csv(r);
    f.close();
    if (!f) {
      err << "drover sim: cannot write " << *csv_path << '\n';
      return 1;
    }
  }
  if (r.never_started > 0) {
    err << "drover sim: " << r.never_started << " jobs never started\n";
    return 1;
  }
  return 0;
}

}  // namespace drover::sim
