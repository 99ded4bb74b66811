// srun: a job step inside an allocation (a batch job's, salloc's), or outside one an
// allocation of its own first.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <thread>

#include "cli/allocation.hpp"
#include "cli/client.hpp"
#include "cli/commands.hpp"
#include "cli/help.hpp"
#include "cli/run_options.hpp"
#include "cli/step_launch.hpp"
#include "core/hostlist.hpp"
#include "core/output_pattern.hpp"
#include "core/text.hpp"
#include "proto/request.hpp"

namespace drover::cli {
namespace {

int fatal(const std::string& line, int code = 1) {
  std::cerr << "srun: fatal: " << line << '\n';
  return code;
}
int error(const std::string& line, int code = 1) {
  std::cerr << "srun: error: " << line << '\n';
  return code;
}

// Splits a --multi-prog command like a shell: blanks separate words, single quotes keep
// everything, double quotes and backslashes as in sh (no expansions).
std::vector<std::string> shell_words(const std::string& text) {
  std::vector<std::string> words;
  std::string cur;
  bool in_word = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\'') {
      const size_t end = text.find('\'', i + 1);
      cur += text.substr(i + 1, (end == std::string::npos ? text.size() : end) - i - 1);
      i = end == std::string::npos ? text.size() : end;
      in_word = true;
    } else if (c == '"') {
      for (++i; i < text.size() && text[i] != '"'; ++i) {
        if (text[i] == '\\' && i + 1 < text.size()) ++i;
        cur += text[i];
      }
      in_word = true;
    } else if (c == '\\' && i + 1 < text.size()) {
      cur += text[++i];
      in_word = true;
    } else if (c == ' ' || c == '\t') {
      if (in_word) words.push_back(cur);
      cur.clear();
      in_word = false;
    } else {
      cur += c;
      in_word = true;
    }
  }
  if (in_word) words.push_back(cur);
  return words;
}

// --multi-prog: "TASKS PROGRAM ARGS..." per line ('#' starts a comment line); TASKS is an id,
// a range, a list or "*" (every task not matched yet). %t is the task id, %o its offset in
// the record's list (for "*" the id). `extra` (srun's arguments after the file) is appended.
// On error `why` holds Slurm's lines.
std::map<uint32_t, std::vector<std::string>> read_multi_prog(const std::string& path, int ntasks,
                                                             const std::vector<std::string>& extra,
                                                             std::vector<std::string>& why) {
  std::ifstream in(path);
  std::map<uint32_t, std::vector<std::string>> out;
  if (!in) {
    why = {"Could not open multi_prog config file " + path};
    return {};
  }
  auto bad_line = [&](int lineno) {
    why.push_back("Line " + std::to_string(lineno) + " of configuration file " + path + " invalid");
    return std::map<uint32_t, std::vector<std::string>>{};
  };
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    const size_t first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] == '#') continue;
    std::vector<std::string> words = shell_words(line.substr(first));
    if (words.size() < 2) return bad_line(lineno);
    const std::string ranks = words.front();
    std::vector<std::string> argv(words.begin() + 1, words.end());
    argv.insert(argv.end(), extra.begin(), extra.end());
    std::vector<std::pair<uint32_t, uint32_t>> ids;  // (task, offset)
    if (ranks == "*") {
      for (int t = 0; t < ntasks; ++t)
        if (!out.count(static_cast<uint32_t>(t)))
          ids.push_back({static_cast<uint32_t>(t), static_cast<uint32_t>(t)});
    } else {
      uint32_t offset = 0;
      for (const auto& part : core::split_list(ranks, ',')) {
        const auto dash = part.find('-');
        unsigned long lo = 0, hi = 0;
        try {
          size_t used = 0;
          lo = std::stoul(part.substr(0, dash), &used);
          if (used != part.substr(0, dash).size()) throw std::invalid_argument("id");
          hi = lo;
          if (dash != std::string::npos) {
            hi = std::stoul(part.substr(dash + 1), &used);
            if (used != part.size() - dash - 1) throw std::invalid_argument("id");
          }
        } catch (const std::exception&) {
          why.push_back("Invalid task range specification (" + part + ")");
          return bad_line(lineno);
        }
        if (hi >= static_cast<unsigned long>(ntasks)) {
          why.push_back("Invalid task id, " + std::to_string(hi) + " >= ntasks");
          return bad_line(lineno);
        }
        for (unsigned long t = lo; t <= hi; ++t)
          ids.push_back({static_cast<uint32_t>(t), offset++});
      }
    }
    for (const auto& [t, offset] : ids) {
      if (out.count(t)) {
        why.push_back("Duplicate record for task " + std::to_string(t));
        return bad_line(lineno);
      }
      std::vector<std::string> a = argv;
      for (auto& w : a) {
        std::string r;
        for (size_t i = 0; i < w.size(); ++i) {
          if (w[i] == '%' && i + 1 < w.size() && (w[i + 1] == 't' || w[i + 1] == 'o')) {
            r += std::to_string(w[i + 1] == 't' ? t : offset);
            ++i;
          } else {
            r += w[i];
          }
        }
        w = r;
      }
      out[t] = a;
    }
  }
  for (int t = 0; t < ntasks; ++t)
    if (!out.count(static_cast<uint32_t>(t))) {
      why = {"Configuration file " + path + " invalid, no record for task id " + std::to_string(t)};
      return {};
    }
  return out;
}

std::string local_hostname() {
  char host[256] = {0};
  ::gethostname(host, sizeof host - 1);
  return host;
}

}  // namespace

int srun_main(const std::vector<std::string>& args) {
  std::map<std::string, std::string> env = process_environment();
  int exit_code = 1;
  std::optional<RunOptions> parsed = parse_run_options_or_report("srun", args, env, exit_code);
  if (!parsed) return exit_code;
  const RunOptions& o = *parsed;
  if (o.help || o.usage) {
    std::cout << (o.help ? kSrunHelp.help : kSrunHelp.usage);
    return 0;
  }
  if (o.version) {
    std::cout << version_text();
    return 0;
  }
  if (o.command.empty()) return fatal("No command given to execute.");
  if (o.pty) return error("--pty is not supported by drover yet");

  // Inside an allocation unless -N/-n... say otherwise? No: SLURM_JOB_ID (or --jobid) names it.
  // A question about a new job, even inside an allocation: nothing runs.
  if (o.test_only) return test_only(allocation_spec(o, "srun", env), "srun");

  std::optional<Allocation> own;
  uint64_t job_id = 0;
  std::map<std::string, std::string> job_env;
  if (o.jobid) {
    try {
      job_id = std::stoull(*o.jobid);
    } catch (const std::exception&) {
      return error("Invalid job id specified");
    }
  } else {
    core::JobSpec spec = allocation_spec(o, "srun", env);
    own = allocate(spec, "srun", o.quiet, o.immediate);
    if (!own) return 1;
    job_id = own->job_id;
    job_env = own->env;
    job_env.erase("SLURM_NODE_ALIASES");  // not in the tasks of srun's own allocation
  }

  // What the step asks for: the command line, else the allocation's (input variables).
  proto::StepCreateRequest req{.job_id = job_id};
  int ntasks = o.ntasks.value_or(0);
  int nodes = o.nodes_min.value_or(0);
  if (!own) {
    if (o.nodes_cli && !o.ntasks_cli && !o.ntasks_per_node) ntasks = 0;  // one per node
    if (ntasks > 0 && nodes > ntasks) {
      if (!o.nodes_cli)
        std::cerr << "srun: Warning: can't run " << ntasks << " processes on " << nodes
                  << " nodes, setting nnodes to " << ntasks << '\n';
      nodes = ntasks;
    }
  }
  if (ntasks > 0) req.ntasks = ntasks;
  if (nodes > 0) req.nodes_min = nodes;
  if (o.nodes_max && o.nodes_cli) req.nodes_max = *o.nodes_max;
  if (o.cpus_per_task) req.cpus_per_task = *o.cpus_per_task;
  req.exact = o.exact || o.exclusive;
  req.overcommit = o.overcommit;
  if (o.ntasks_per_node) req.ntasks_per_node = *o.ntasks_per_node;
  if (o.nodelist) req.nodelist = *o.nodelist;
  if (o.exclude) req.exclude = *o.exclude;
  req.overlap = o.overlap;
  const std::string dist =
      o.distribution ? o.distribution->substr(0, o.distribution->find_first_of(":,")) : "block";
  req.distribution = dist == "cyclic" ? "cyclic" : "block";
  if (o.mem_mb) req.mem_mb = *o.mem_mb;
  std::string base = o.command.front();
  if (auto slash = base.rfind('/'); slash != std::string::npos) base = base.substr(slash + 1);
  req.name = o.job_name.value_or(base);
  std::string line = "srun";
  for (const auto& a : args) line += " " + a;
  req.command = line;
  req.srun_host = local_hostname();
  req.srun_pid = ::getpid();
  if (o.time_limit_min) req.time_limit_min = *o.time_limit_min;

  auto give_back = [&](int status) {
    if (own) release_allocation(own->job_id, status);
  };
  json step;
  bool said_busy = false;
  while (true) {
    try {
      step = call_controller(req);
    } catch (const ControllerUnreachable&) {
      give_back(1 << 8);
      return error("Unable to create step for job " + std::to_string(job_id) +
                   ": Unable to contact slurm controller (connect failure)");
    }
    if (step.value("ok", false)) break;
    if (step.value("busy", false)) {
      if (!said_busy && !o.quiet)
        std::cerr << "srun: Job " << job_id << " step creation temporarily disabled, retrying ("
                  << step.value("error", "") << ")\n";
      said_busy = true;
      if (own && !allocation_alive(job_id)) return 1;
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
      continue;
    }
    give_back(1 << 8);
    if (step.value("plain", false)) return error(step.value("error", "unknown error"));
    return error("Unable to create step for job " + std::to_string(job_id) + ": " +
                 step.value("error", "unknown error"));
  }
  if (said_busy && !o.quiet) std::cerr << "srun: Step created for job " << job_id << '\n';

  const uint32_t step_id = step.value("step_id", uint32_t{0});
  const int step_tasks = step.value("ntasks", 1);
  const std::string step_nodes = step.value("nodelist", "");
  const int step_nnodes = static_cast<int>(step.at("nodes").size());
  if (job_env.empty()) job_env = step.value("job_env", std::map<std::string, std::string>{});
  // A step that cannot be launched ends with exit code 1.
  auto fail_step = [&] {
    try {
      call_controller(
          proto::StepCompleteRequest{.job_id = job_id, .step_id = step_id, .exit_code = 1});
    } catch (const ControllerUnreachable&) {
    }
  };

  LaunchRequest launch;
  launch.step = step;
  std::vector<char> cwd(4096);
  launch.cwd = o.workdir.value_or(::getcwd(cwd.data(), cwd.size()) ? cwd.data() : "/");
  launch.argv = o.command;
  if (o.multi_prog) {
    std::vector<std::string> why;
    const std::vector<std::string> extra(o.command.begin() + 1, o.command.end());
    launch.task_argv = read_multi_prog(o.command.front(), step_tasks, extra, why);
    if (!why.empty()) {
      fail_step();
      give_back(1 << 8);
      for (const auto& line : why) error(line);
      return 1;
    }
  }
  // The tasks' environment: srun's own (--export=ALL), the allocation's when srun made it,
  // then the step's.
  std::map<std::string, std::string> task_env = env;
  if (o.export_env && *o.export_env != "ALL") {
    task_env.clear();
    for (const char* keep : {"PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "LANG"})
      if (env.count(keep)) task_env[keep] = env.at(keep);
    for (const auto& item : core::split_list(*o.export_env, ','))
      if (auto eq = item.find('='); eq != std::string::npos)
        task_env[item.substr(0, eq)] = item.substr(eq + 1);
      else if (item != "NONE" && env.count(item))
        task_env[item] = env.at(item);
    for (const auto& [k, v] : env)
      if (k.rfind("SLURM_", 0) == 0) task_env[k] = v;
  }
  for (const auto& [k, v] : job_env) task_env[k] = v;
  auto set = [&](const std::string& k, const std::string& v) { task_env[k] = v; };
  const std::string jid = std::to_string(job_id), sid = std::to_string(step_id);
  set("SLURM_JOB_ID", jid);
  set("SLURM_JOBID", jid);
  set("SLURM_STEP_ID", sid);
  set("SLURM_STEPID", sid);
  set("SLURM_STEP_NODELIST", step_nodes);
  set("SLURM_STEP_NUM_NODES", std::to_string(step_nnodes));
  set("SLURM_STEP_NUM_TASKS", std::to_string(step_tasks));
  set("SLURM_STEP_TASKS_PER_NODE", step.value("tasks_per_node", ""));
  // SLURM_NODELIST stays the job's, as in Slurm; the counts become the step's, unless -E keeps
  // the ones srun was given.
  auto count = [&](const std::string& k, int n) {
    if (!o.preserve_env || !task_env.count(k)) set(k, std::to_string(n));
  };
  count("SLURM_NNODES", step_nnodes);
  count("SLURM_NTASKS", step_tasks);
  count("SLURM_NPROCS", step_tasks);
  set("SLURM_TASKS_PER_NODE", step.value("tasks_per_node", ""));
  // Inside an existing allocation srun always says how it distributed the tasks (cyclic when
  // there is at most one per node); for an allocation of its own only when asked (-m).
  if (o.distribution)
    set("SLURM_DISTRIBUTION", *o.distribution);
  else if (!own || o.mem_mb || o.mem_per_cpu_mb)
    set("SLURM_DISTRIBUTION", step_tasks <= step_nnodes ? "cyclic" : "block");
  if (!own && task_env.count("SLURM_JOB_CPUS_PER_NODE"))
    set("SLURM_JOB_CPUS_PER_NODE_PACK_GROUP_0", task_env["SLURM_JOB_CPUS_PER_NODE"]);
  set("SRUN_DEBUG", std::to_string(o.quiet ? 2 : 3 + o.verbose));
  errno = 0;
  const int nice_now = ::getpriority(PRIO_PROCESS, 0);
  set("SLURM_PRIO_PROCESS", std::to_string(errno == 0 ? nice_now : 0));
  if (o.cpus_per_task) set("SLURM_CPUS_PER_TASK", std::to_string(*o.cpus_per_task));
  set("SLURM_UMASK", umask_string());
  for (const auto& [name, value] : propagated_limits(o.propagate)) set(name, value);
  if (o.label) set("SLURM_LABELIO", "1");
  if (o.overcommit) set("SLURM_OVERCOMMIT", "1");

  launch.env = task_env;
  launch.task_prolog = o.task_prolog.value_or("");
  launch.task_epilog = o.task_epilog.value_or("");
  if (const auto conf = local_slurm_conf()) {
    launch.conf_task_prolog = conf->get("TaskProlog", "");
    launch.conf_task_epilog = conf->get("TaskEpilog", "");
  }
  launch.label = o.label;
  launch.unbuffered = o.unbuffered;
  launch.kill_on_bad_exit = o.kill_on_bad_exit;
  launch.quiet = o.quiet;
  launch.quit_on_interrupt = o.quit_on_interrupt;
  launch.disable_status = o.disable_status;
  launch.wait_s = o.wait_s;
  launch.stdin_mode = o.input.value_or("all");
  std::string unopened;  // srun's own -o/-e file (see below) that could not be opened
  // -o/-e/-i: a file name pattern per task (%t task, %n node, %N host, %j job, %s step, ...);
  // "none" and a task number as Slurm reads them.
  auto files = [&](const std::optional<std::string>& pattern, std::map<uint32_t, std::string>& out,
                   bool is_input) {
    if (!pattern || *pattern == "all") return;
    if (*pattern == "none") {
      if (is_input)
        launch.stdin_mode = "none";
      else
        for (int t = 0; t < step_tasks; ++t) out[static_cast<uint32_t>(t)] = "/dev/null";
      return;
    }
    if (std::all_of(pattern->begin(), pattern->end(), ::isdigit)) {
      if (is_input) launch.stdin_mode = *pattern;
      return;
    }
    int node_index = 0;
    for (const auto& n : step.at("nodes")) {
      for (uint32_t t : n.at("tasks").get<std::vector<uint32_t>>()) {
        core::PatternContext ctx;
        ctx.job_id = job_id;
        ctx.array_job_id = job_id;
        ctx.job_name = req.name.value_or("");
        ctx.user = env.count("USER") ? env.at("USER") : "";
        ctx.first_node = n.at("name").get<std::string>();
        ctx.node_index = static_cast<uint32_t>(node_index);
        ctx.task_id = t;
        ctx.step_id = step_id;
        std::string path = core::expand_output_pattern(*pattern, ctx);
        if (path.front() != '/') path = launch.cwd + "/" + path;
        out[t] = path;
      }
      ++node_index;
    }
    if (is_input) return;
    // Tasks sharing a file append to it: it is emptied once here (unless --open-mode=append).
    // A name that is the same for every task (no %t, %n or %N) is opened by srun in Slurm,
    // which gives up on the step when it cannot: so here too (the nodes would fail alike).
    const bool truncate = o.open_mode.value_or("") != "append";
    const bool one_file = !core::pattern_varies_by_task(*pattern);
    std::set<std::string> seen;
    for (const auto& [t, path] : out)
      if ((truncate || one_file) && seen.insert(path).second && path != "/dev/null") {
        // Created with srun's umask, as the tasks' files are (SLURM_UMASK).
        int fd =
            ::open(path.c_str(), O_WRONLY | O_CREAT | (truncate ? O_TRUNC : 0) | O_CLOEXEC, 0666);
        if (fd >= 0)
          ::close(fd);
        else if (one_file && unopened.empty())
          unopened = std::string("Could not open ") +
                     (&out == &launch.stdout_files ? "stdout" : "stderr") +
                     " file: " + std::strerror(errno);
      }
    launch.open_mode = "append";
  };
  files(o.output, launch.stdout_files, false);
  files(o.error, launch.stderr_files, false);
  if (!unopened.empty()) {
    // Slurm ends the step and, when srun made the allocation, cancels the job.
    fail_step();
    try {
      if (own) {
        proto::CancelRequest cancel;
        cancel.jobs = std::vector<std::string>{std::to_string(job_id)};
        call_controller(cancel);
      }
    } catch (const ControllerUnreachable&) {
    }
    return error(unopened);
  }
  files(o.input, launch.stdin_files, true);
  if (launch.stdout_files.size() && !launch.stderr_files.size())
    launch.stderr_files = launch.stdout_files;

  StepOutcome outcome = run_step(launch);

  const proto::StepCompleteRequest done{.job_id = job_id,
                                        .step_id = step_id,
                                        .exit_code = outcome.max_exit,
                                        .exit_signal = outcome.term_signal,
                                        .cancelled = outcome.cancelled};
  try {
    call_controller(done);
  } catch (const ControllerUnreachable&) {
  }
  if (own) {
    const int status = outcome.term_signal ? outcome.term_signal : (outcome.max_exit & 0xff) << 8;
    release_allocation(own->job_id, status);
  }
  return outcome.exit_code;
}

}  // namespace drover::cli
