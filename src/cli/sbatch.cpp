// sbatch: submit a batch script.
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <tuple>

#include "cli/client.hpp"
#include "cli/commands.hpp"
#include "cli/help.hpp"
#include "core/duration.hpp"
#include "core/error.hpp"
#include "core/export_env.hpp"
#include "core/job.hpp"
#include "core/memsize.hpp"
#include "core/sbatch_options.hpp"
#include "core/text.hpp"
#include "core/time_spec.hpp"
#include "proto/error.hpp"
#include "proto/json.hpp"

extern char** environ;

namespace drover::cli {
namespace {

// Options the parser understands but drover does not act on yet: refusing them beats
// silently running a different job than the one asked for.

// Option errors exit 255 as in Slurm; the core formats their lines (prefixes included).
// Counts that parse but are out of range are found later by real sbatch, which exits 1.
int parse_error(const core::ParseError& e) {
  std::cerr << core::format_sbatch_error(e);
  return std::string_view(e.what()).rfind("Invalid numeric value", 0) == 0 ? 1 : 255;
}

// Where sbatch finds a script named on the command line: as given, else (a bare name) on PATH.
std::string find_script(const std::string& name) {
  std::error_code ec;
  if (std::filesystem::exists(name, ec) || name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  for (const auto& dir : core::split_list(path ? path : "", ':')) {
    std::string candidate = dir + "/" + name;
    if (std::filesystem::is_regular_file(candidate, ec)) return candidate;
  }
  return name;
}

}  // namespace

std::string umask_string() {
  const mode_t m = ::umask(0);
  ::umask(m);
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(m));
  return buf;
}

namespace {

std::map<std::string, std::string> current_environment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; e && *e; ++e) {
    std::string kv = *e;
    auto eq = kv.find('=');
    if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return env;
}

std::string hostname() {
  char buf[256] = {};
  ::gethostname(buf, sizeof buf - 1);
  return buf;
}

// -W/--wait: poll until the job (every task of an array) has ended; exit with its exit code,
// the highest over an array's tasks, as sbatch does.
int wait_for_job(uint64_t id) {
  int delay_ms = 10;
  while (true) {
    json reply;
    try {
      reply =
          call_controller({{"op", "query"}, {"what", "jobs"}, {"job_id", id}, {"detail", false}});
    } catch (const ControllerUnreachable&) {
      ::usleep(500 * 1000);
      continue;
    }
    if (!reply.value("ok", false)) return 0;  // purged: nothing more to learn
    bool done = true;
    int rc = 0;
    for (const auto& job : reply.at("jobs")) {
      auto state = core::parse_job_state(job.value("state", "PENDING"));
      if (!state || !core::is_finished(*state) || job.value("completing", false)) done = false;
      // Checked against sbatch 22.05: a job killed by a signal makes -W exit 1.
      int code = job.value("exit_signal", 0) != 0 ? 1 : job.value("exit_code", 0);
      if (state && *state != core::JobState::Completed && code == 0) code = 1;
      rc = std::max(rc, code);
    }
    if (done) return rc;
    ::usleep(delay_ms * 1000);
    delay_ms = std::min(delay_ms * 2, 1000);
  }
}

}  // namespace

int sbatch_main(const std::vector<std::string>& args) {
  const auto env = current_environment();
  core::SbatchOptions cmdline;
  try {
    cmdline = core::parse_sbatch_args(args);
  } catch (const core::ParseError& e) {
    return parse_error(e);
  }
  if (cmdline.help || cmdline.usage) {
    std::cout << "Usage: sbatch [OPTIONS(0)...] [ : [OPTIONS(N)...]] script(0) [args(0)...]\n"
                 "See `man sbatch` for the options; drover accepts Slurm's.\n";
    return 0;
  }
  if (cmdline.version) {
    std::cout << version_text();
    return 0;
  }

  // The script: --wrap, a file, or standard input.
  std::string script, script_name;
  std::vector<std::string> script_argv = cmdline.script_argv;
  if (cmdline.wrap) {
    if (!script_argv.empty()) {
      std::cerr << "sbatch: error: Script arguments not permitted with --wrap option\n";
      return 1;
    }
    script = "#!/bin/sh\n# This script was created by sbatch --wrap.\n\n" + *cmdline.wrap + "\n";
    script_name = "wrap";
  } else if (!script_argv.empty()) {
    script_argv.front() = find_script(script_argv.front());
    std::error_code ec;
    if (std::filesystem::is_directory(script_argv.front(), ec)) {
      std::cerr << "sbatch: error: Batch script is empty!\n";  // what reading a directory gives
      return 1;
    }
    std::ifstream in(script_argv.front(), std::ios::binary);
    if (!in) {
      // A file that exists but cannot be read is named by its absolute path, as sbatch does.
      std::string shown = script_argv.front();
      if (std::filesystem::exists(shown, ec))
        shown = std::filesystem::absolute(shown, ec).lexically_normal().string();
      std::cerr << "sbatch: error: Unable to open file " << shown << '\n';
      return 1;
    }
    script.assign(std::istreambuf_iterator<char>(in), {});
    script_name = std::filesystem::path(script_argv.front()).filename().string();
    script_argv.front() =
        std::filesystem::absolute(script_argv.front(), ec).lexically_normal().string();
  } else {
    script.assign(std::istreambuf_iterator<char>(std::cin), {});
    script_name = "sbatch";
  }
  if (script.empty()) {
    std::cerr << "sbatch: error: Batch script is empty!\n";
    return 1;
  }
  try {
    core::check_batch_script(script);
  } catch (const core::ParseError& e) {
    std::cerr << core::format_sbatch_error(e);
    return 1;
  }

  // Precedence: #SBATCH lines < SBATCH_* environment < command line.
  core::SbatchOptions opts;
  try {
    opts = core::parse_sbatch_directives(core::scan_sbatch_directives(script, script_name));
    opts = core::apply_sbatch_env(env, std::move(opts));
    opts = core::parse_sbatch_args(args, std::move(opts));
  } catch (const core::ParseError& e) {
    return parse_error(e);
  }

  core::JobSpec spec;
  spec.name = opts.job_name.value_or(script_name);
  spec.default_name = !opts.job_name && script_argv.empty() && !cmdline.wrap;
  if (opts.partition && opts.partition->empty()) {
    std::cerr << "sbatch: error: invalid partition specified: (null)\n"
                 "sbatch: error: Batch job submission failed: Invalid partition name specified\n";
    return 1;
  }
  if (opts.partition) {
    std::stringstream parts(*opts.partition);
    std::string p;
    while (std::getline(parts, p, ','))
      if (!p.empty()) spec.partitions.push_back(p);
  }
  if (opts.ntasks) {
    spec.ntasks = *opts.ntasks;
    spec.ntasks_set = true;
  }
  if (opts.nodes_min) {
    spec.nodes_min = *opts.nodes_min;
    spec.nodes_max = opts.nodes_max.value_or(*opts.nodes_min);
    spec.nodes_set = true;
  }
  if (opts.ntasks_per_node) spec.ntasks_per_node = *opts.ntasks_per_node;
  if (!opts.ntasks && spec.ntasks_per_node > 0) {
    spec.ntasks = spec.ntasks_per_node * spec.nodes_min;
    spec.ntasks_set = true;
  }
  if (spec.nodes_set && spec.ntasks < spec.nodes_min) spec.ntasks = spec.nodes_min;
  if (opts.cpus_per_task) {
    spec.cpus_per_task = *opts.cpus_per_task;
    spec.cpus_per_task_set = true;
  }
  if (opts.mem_mb) spec.mem_per_node_mb = *opts.mem_mb;
  if (opts.mem_per_cpu_mb) spec.mem_per_cpu_mb = *opts.mem_per_cpu_mb;
  if (opts.time_limit_min) spec.time_limit_min = *opts.time_limit_min;
  spec.exclusive = opts.exclusive;
  std::error_code ec;
  const std::string cwd = std::filesystem::current_path(ec).string();
  spec.workdir =
      opts.workdir ? std::filesystem::absolute(*opts.workdir, ec).lexically_normal().string() : cwd;
  if (!spec.workdir.empty() && spec.workdir.size() > 1 && spec.workdir.back() == '/')
    spec.workdir.pop_back();
  spec.std_out = opts.output.value_or("");
  spec.std_err = opts.error.value_or("");
  spec.std_in = opts.input.value_or("");
  spec.script = std::move(script);
  spec.argv = script_argv.empty() ? std::vector<std::string>{script_name} : script_argv;
  spec.environment = core::exported_environment(opts.export_env, env);
  // The agent runs the batch shell with it (and takes it out of the shell's environment).
  spec.environment["SLURM_UMASK"] = umask_string();
  spec.get_user_env =
      core::export_wants_user_env(opts.export_env) || opts.other.count("get-user-env");
  spec.submit_dir = cwd;
  // An sbatch inside the job must not name its submission as this one did.
  spec.environment.erase("DROVER_REQUEST_ID");
  errno = 0;
  const int nice_now = ::getpriority(PRIO_PROCESS, 0);
  spec.submit_nice = errno == 0 ? nice_now : 0;
  spec.submit_host = hostname();
  spec.submit_sid = ::getsid(0);
  if (!cmdline.wrap && !script_argv.empty()) {
    // Command= shows the script with its arguments, as Slurm keeps it.
    spec.command = script_argv.front();
    for (size_t i = 1; i < script_argv.size(); ++i) spec.command += " " + script_argv[i];
  }
  spec.comment = opts.comment.value_or("");
  if (auto it = opts.other.find("mincpus"); it != opts.other.end())
    spec.min_cpus = std::atoi(it->second.c_str());
  if (auto it = opts.other.find("tmp"); it != opts.other.end())
    spec.tmp_disk_mb = core::parse_mem_mb(it->second, "--tmp");
  spec.account = opts.account.value_or("");
  spec.qos = opts.qos.value_or("");
  spec.array = opts.array.value_or("");
  spec.dependency = opts.dependency.value_or("");
  const int64_t now = static_cast<int64_t>(::time(nullptr));
  // Slurm prints the time parser's own line (when it has one), then names the option.
  for (auto [text, target, option] : {std::tuple{&opts.begin, &spec.begin_time, "--begin"},
                                      std::tuple{&opts.deadline, &spec.deadline, "--deadline"}}) {
    if (!*text) continue;
    try {
      *target = core::parse_time_spec(**text, now);
    } catch (const core::ParseError& e) {
      if (*e.what()) std::cerr << e.what() << '\n';
      std::cerr << "sbatch: error: Invalid " << option << " specification\n";
      return 255;
    }
  }
  spec.hold = opts.hold;
  spec.nice = opts.nice.value_or(0);
  if (opts.requeue_set) spec.requeue = opts.requeue ? 1 : 0;
  if (opts.kill_on_invalid_dep_set) spec.kill_on_invalid_dep = opts.kill_on_invalid_dep ? 1 : 0;
  spec.signal = opts.signal.value_or("");
  spec.nodelist = opts.nodelist.value_or("");
  spec.exclude = opts.exclude.value_or("");
  spec.constraint = opts.constraint.value_or("");
  spec.reservation = opts.reservation.value_or("");
  spec.licenses = opts.licenses.value_or("");
  spec.mail_type = opts.mail_type.value_or("");
  spec.mail_user = opts.mail_user.value_or("");
  spec.open_mode = opts.open_mode.value_or("");
  spec.gres = opts.gres.value_or("");
  spec.gpus = opts.gpus.value_or("");
  spec.gpus_per_node = opts.gpus_per_node.value_or("");
  spec.gpus_per_task = opts.gpus_per_task.value_or("");
  spec.mem_per_gpu_mb = opts.mem_per_gpu_mb.value_or(-1);

  json reply;
  try {
    json request = {{"op", "submit"}, {"spec", spec}, {"test_only", opts.test_only}};
    // $DROVER_REQUEST_ID names the submission, so running sbatch again with it after a lost
    // reply gets the job already made (it is kept out of the job's environment above).
    const char* id = std::getenv("DROVER_REQUEST_ID");
    reply = opts.test_only ? call_controller(request)
                           : submit_to_controller(std::move(request), id ? id : "");
  } catch (const SubmitUnanswered& e) {
    std::cerr << "sbatch: error: Batch job submission failed: " << unanswered_submission(e) << '\n';
    if (e.maybe_received)
      std::cerr << "sbatch: error: Run sbatch again with DROVER_REQUEST_ID=" << e.request_id
                << " to get its job id without submitting it twice\n";
    return 1;
  } catch (const ControllerUnreachable&) {
    std::cerr << "sbatch: error: Batch job submission failed: Unable to contact slurm controller "
                 "(connect failure)\n";
    return 1;
  }
  if (const auto failed = proto::Error::from_reply(reply)) {
    const std::string& error = failed->message;
    if (opts.test_only) {
      std::cerr << "allocation failure: " << error << '\n';
      return 1;
    }
    if (failed->code == proto::Errno::kInvalidPartitionName && reply.contains("bad_partition"))
      std::cerr << "sbatch: error: invalid partition specified: "
                << reply["bad_partition"].get<std::string>() << '\n';
    if (reply.contains("detail"))
      std::cerr << "sbatch: error: " << reply["detail"].get<std::string>() << '\n';
    // Some checks real sbatch makes itself, before submitting: no "submission failed".
    if (reply.value("local", false))
      std::cerr << "sbatch: error: " << error << '\n';
    else
      std::cerr << "sbatch: error: Batch job submission failed: " << error << '\n';
    return 1;
  }
  if (reply.value("test_only", false)) {
    std::cerr << "sbatch: Job " << reply.value("job_id", uint64_t{0}) << " to start at "
              << core::format_timestamp(reply.value("start", int64_t{0})) << " using "
              << reply.value("cpus", 0) << " processors on nodes " << reply.value("nodes", "")
              << " in partition " << reply.value("partition", "") << '\n';
    return 0;
  }
  const uint64_t id = reply.at("job_id").get<uint64_t>();
  if (opts.parsable && !opts.quiet)
    std::cout << id << '\n';
  else if (!opts.quiet)
    std::cout << "Submitted batch job " << id << '\n';
  std::cout.flush();
  return opts.wait ? wait_for_job(id) : 0;
}

}  // namespace drover::cli
