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
#include "core/rlimits.hpp"
#include "core/sbatch_options.hpp"
#include "core/text.hpp"
#include "core/time_spec.hpp"
#include "proto/error.hpp"
#include "proto/json.hpp"
#include "proto/request.hpp"

extern char** environ;

namespace drover::cli {
namespace {

// --usage and --help: Slurm 22.05's layout and option set, drover's words. sbatch takes every
// option of Slurm's; the DROVER NOTES say which ones have no effect here.
constexpr const char* kUsageText =
    "Usage: sbatch [-N nnodes] [-n ntasks]\n"
    "              [-c ncpus] [-r n] [-p partition] [--hold] [--parsable] [-t minutes]\n"
    "              [-D path] [--no-kill] [--overcommit]\n"
    "              [--input file] [--output file] [--error file]\n"
    "              [--time-min=minutes] [--licenses=names] [--clusters=cluster_names]\n"
    "              [--chdir=directory] [--oversubscribe] [-m dist] [-J jobname]\n"
    "              [--verbose] [--gid=group] [--uid=user]\n"
    "              [--contiguous] [--mincpus=n] [--mem=MB] [--tmp=MB] [-C list]\n"
    "              [--account=name] [--dependency=type:jobid[+time]] [--comment=name]\n"
    "              [--mail-type=type] [--mail-user=user] [--nice[=value]] [--wait]\n"
    "              [--requeue] [--no-requeue] [--ntasks-per-node=n] [--propagate]\n"
    "              [--nodefile=file] [--nodelist=hosts] [--exclude=hosts]\n"
    "              [--network=type] [--mem-per-cpu=MB] [--qos=qos] [--gres=list]\n"
    "              [--mem-bind=...] [--reservation=name] [--mcs-label=mcs]\n"
    "              [--cpu-freq=min[-max[:gov]]] [--power=flags] [--gres-flags=opts]\n"
    "              [--switches=max-switches{@max-time-to-wait}] [--reboot]\n"
    "              [--core-spec=cores] [--thread-spec=threads]\n"
    "              [--bb=burst_buffer_spec] [--bbf=burst_buffer_file]\n"
    "              [--array=index_values] [--profile=...] [--ignore-pbs] [--spread-job]\n"
    "              [--export[=names]] [--export-file=file|fd] [--delay-boot=mins]\n"
    "              [--use-min-nodes]\n"
    "              [--cpus-per-gpu=n] [--gpus=n] [--gpu-bind=...] [--gpu-freq=...]\n"
    "              [--gpus-per-node=n] [--gpus-per-socket=n] [--gpus-per-task=n]\n"
    "              [--mem-per-gpu=MB]\n"
    "              executable [args...]\n";

constexpr const char* kHelpText =
    "Usage: sbatch [OPTIONS(0)...] [ : [OPTIONS(N)...]] script(0) [args(0)...]\n"
    "\n"
    "Parallel run options:\n"
    "  -a, --array=indexes         submit a job array with these task indexes\n"
    "  -A, --account=name          account the job's usage is charged to\n"
    "      --bb=<spec>             burst buffer request\n"
    "      --bbf=<file_name>       file holding the burst buffer request\n"
    "  -b, --begin=time            hold the job until this time (e.g. now+1hour)\n"
    "      --comment=name          free-form comment kept with the job\n"
    "      --cpu-freq=min[-max[:gov]] CPU frequency range and governor wanted\n"
    "  -c, --cpus-per-task=ncpus   CPUs given to each task\n"
    "  -d, --dependency=type:jobid[:time] start only once jobid meets the condition\n"
    "      --deadline=time         cancel the job if it cannot end by this time\n"
    "                              (when start > deadline - time limit)\n"
    "      --delay-boot=mins       wait this long before rebooting for features\n"
    "  -D, --chdir=directory       directory the batch script runs in\n"
    "  -e, --error=err             where the script's standard error goes\n"
    "      --export[=names]        which environment variables the job gets\n"
    "      --export-file=file|fd   read variables for the job from a file or\n"
    "                              an open file descriptor\n"
    "      --get-user-env          take the environment of a fresh login of the\n"
    "                              user\n"
    "      --gid=group_id          group to run the job as (root only)\n"
    "      --gres=list             generic resources needed\n"
    "      --gres-flags=opts       how generic resources are allocated\n"
    "  -H, --hold                  submit the job held (release with scontrol)\n"
    "      --ignore-pbs            skip #PBS and #BSUB lines in the script\n"
    "  -i, --input=in              where the script's standard input comes from\n"
    "  -J, --job-name=jobname      the job's name\n"
    "  -k, --no-kill               keep the job running when one of its nodes fails\n"
    "  -L, --licenses=names        licenses needed, comma separated\n"
    "  -M, --clusters=names        clusters to submit to, comma separated;\n"
    "                              'all' for every cluster (needs slurmdbd)\n"
    "      --container             OCI container bundle to run the job in\n"
    "  -m, --distribution=type     how tasks are laid out over nodes\n"
    "                              (block|cyclic|arbitrary)\n"
    "      --mail-type=type        events to mail about: BEGIN, END, FAIL, ALL\n"
    "      --mail-user=user        who receives the job's mail\n"
    "      --mcs-label=mcs         MCS label (with the mcs/group plugin)\n"
    "  -n, --ntasks=ntasks         how many tasks the job runs\n"
    "      --nice[=value]          lower the job's priority by value\n"
    "      --no-requeue            never requeue the job\n"
    "      --ntasks-per-node=n     tasks to start on each node\n"
    "  -N, --nodes=N               node count, as N or min-max\n"
    "  -o, --output=out            where the script's standard output goes\n"
    "  -O, --overcommit            allow more tasks than CPUs\n"
    "  -p, --partition=partition   partition(s) to run in\n"
    "      --parsable              print only the job id (and \";cluster\") when\n"
    "                              the job is submitted\n"
    "      --power=flags           power management flags\n"
    "      --priority=value        set the job's priority (operators only)\n"
    "      --profile=value         profiling data to gather: all, none, or any\n"
    "                              of energy, lustre, network, task\n"
    "      --propagate[=rlimits]   resource limits the job inherits (all, or\n"
    "                              the ones named)\n"
    "  -q, --qos=qos               quality of service\n"
    "  -Q, --quiet                 print no informational messages\n"
    "      --reboot                reboot the nodes before the job starts\n"
    "      --requeue               allow the job to be requeued\n"
    "  -s, --oversubscribe         share nodes with other jobs\n"
    "  -S, --core-spec=cores       cores kept back for system use\n"
    "      --signal=[[R][B]:]num[@time] signal the job time seconds before its end\n"
    "      --spread-job            use as many nodes as possible\n"
    "--switches=max-switches{@max-time-to-wait}\n"
    "                              most switches wanted, and how long to wait\n"
    "      --thread-spec=threads   threads kept back for system use\n"
    "  -t, --time=minutes          time limit\n"
    "      --time-min=minutes      smallest time limit the job accepts\n"
    "      --uid=user_id           user to run the job as (root only)\n"
    "      --use-min-nodes         take the low end of a node count range\n"
    "  -v, --verbose               say more (repeat for more still)\n"
    "  -W, --wait                  return only when the job has ended\n"
    "      --wckey=wckey           workload characterization key\n"
    "      --wrap[=command string] run this command line as the job's script\n"
    "\n"
    "Constraint options:\n"
    "      --cluster-constraint=[!]list features the cluster must (not) have\n"
    "      --contiguous            nodes with consecutive names only\n"
    "  -C, --constraint=list       node features required\n"
    "  -F, --nodefile=filename     file listing the nodes wanted\n"
    "      --mem=MB                memory needed on each node\n"
    "      --mincpus=n             fewest CPUs (threads) a node must have\n"
    "      --reservation=name      run inside this reservation\n"
    "      --tmp=MB                temporary disk space needed per node\n"
    "  -w, --nodelist=hosts...     nodes the job must include\n"
    "  -x, --exclude=hosts...      nodes the job must not use\n"
    "\n"
    "Consumable resources related options:\n"
    "      --exclusive[=user]      no other jobs (of other users) on the nodes\n"
    "      --exclusive[=mcs]       no jobs of another MCS label on the nodes\n"
    "      --mem-per-cpu=MB        memory needed per allocated CPU\n"
    "                              (not together with --mem)\n"
    "\n" DROVER_HELP_AFFINITY_AND_GPUS DROVER_HELP_HELP_AND_VERSION;

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
      reply = call_controller(proto::QueryRequest{.what = "jobs", .job_id = id, .detail = false});
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

extern const CommandHelp kSbatchHelp{
    "sbatch", "submits a batch script, to run once the resources it asks for are free", kUsageText,
    kHelpText,
    "Options are read from the command line, then from #SBATCH lines of the script, then from "
    "SBATCH_* variables, as in Slurm, with getopt_long's rules (any unique prefix of a long "
    "option).\n\n"
    "drover accepts every option above; these are accepted and have no effect: --acctg-freq, "
    "--bb, --bbf, --container, --cpu-freq, --delay-boot, --get-user-env, --gpu-bind, "
    "--gpu-freq, --ignore-pbs, --mail-type, --mail-user, --mcs-label, --power, --profile, "
    "--reboot, --switches, --core-spec, --thread-spec and the socket, core and thread "
    "layout options. -M/--clusters is accepted and the job goes to drover's one cluster; "
    "--uid and --gid are accepted and change nothing: a job runs as the user the operating "
    "system says submitted it.\n\n"
    "-V prints \"slurm 22.05.8\", the release drover's commands follow, so that scripts which "
    "check it keep working."};

int sbatch_main(const std::vector<std::string>& args) {
  const auto env = current_environment();
  core::SbatchOptions cmdline;
  try {
    cmdline = core::parse_sbatch_args(args);
  } catch (const core::ParseError& e) {
    return parse_error(e);
  }
  if (cmdline.help || cmdline.usage) {
    std::cout << (cmdline.help ? kHelpText : kUsageText);
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
  // And the resource limits it applies to the shell (--propagate, else slurm.conf's).
  std::optional<std::string> propagate;
  if (auto it = opts.other.find("propagate"); it != opts.other.end()) {
    propagate = it->second;
    try {
      core::parse_rlimit_list(it->second.empty() ? "ALL" : it->second);
    } catch (const core::ParseError& e) {
      std::cerr << "sbatch: error: " << e.what() << "\nsbatch: error: --propagate=" << it->second
                << " is not valid.\n";
      return 1;
    }
  }
  for (const auto& [name, value] : propagated_limits(propagate)) spec.environment[name] = value;
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
  // -k, -kset or --no-kill=set; "off" (from a later source) turns it off again.
  if (auto it = opts.other.find("no-kill"); it != opts.other.end())
    spec.no_kill = core::to_lower(it->second) != "off";
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

  std::optional<proto::Outcome<proto::SubmitReply>> outcome;
  try {
    proto::SubmitRequest request{.spec = spec, .test_only = opts.test_only};
    // $DROVER_REQUEST_ID names the submission, so running sbatch again with it after a lost
    // reply gets the job already made (it is kept out of the job's environment above).
    const char* id = std::getenv("DROVER_REQUEST_ID");
    outcome =
        opts.test_only ? ask(request) : submit_to_controller(std::move(request), id ? id : "");
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
  if (const proto::ErrorReply* failed = outcome->refusal()) {
    const std::string& error = failed->error.message;
    const bool bad_partition =
        failed->error.code == proto::Errno::kInvalidPartitionName && failed->bad_partition;
    if (bad_partition)
      std::cerr << "sbatch: error: invalid partition specified: " << *failed->bad_partition << '\n';
    if (opts.test_only) {
      std::cerr << "allocation failure: " << error << '\n';
      return 1;
    }
    if (failed->detail) std::cerr << "sbatch: error: " << *failed->detail << '\n';
    // Some checks real sbatch makes itself, before submitting: no "submission failed".
    if (failed->local.value_or(false))
      std::cerr << "sbatch: error: " << error << '\n';
    else
      std::cerr << "sbatch: error: Batch job submission failed: " << error << '\n';
    return 1;
  }
  const proto::SubmitReply& reply = outcome->reply();
  if (reply.test_only.value_or(false)) {
    std::cerr << "sbatch: Job " << reply.job_id << " to start at "
              << core::format_timestamp(reply.start.value_or(0)) << " using "
              << reply.cpus.value_or(0) << " processors on nodes " << reply.nodes.value_or("")
              << " in partition " << reply.partition.value_or("") << '\n';
    return 0;
  }
  const uint64_t id = reply.job_id;
  if (opts.parsable && !opts.quiet)
    std::cout << id << '\n';
  else if (!opts.quiet)
    std::cout << "Submitted batch job " << id << '\n';
  std::cout.flush();
  return opts.wait ? wait_for_job(id) : 0;
}

}  // namespace drover::cli
