#include "agent/proctrack.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace drover::agent {
namespace fs = std::filesystem;

namespace {
bool exists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }

std::optional<std::string> read_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// One write, as cgroup files want; errno tells why it failed.
bool write_file(const std::string& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  const int err = errno;
  ::close(fd);
  errno = err;
  return ok;
}

bool has_word(const std::string& text, const std::string& word) {
  std::istringstream in(text);
  for (std::string w; in >> w;)
    if (w == word) return true;
  return false;
}

void make_dir(const std::string& path) {
  if (::mkdir(path.c_str(), 0755) != 0 && errno != EEXIST)
    throw std::runtime_error("cannot create cgroup " + path + ": " + std::strerror(errno));
}

// A v1 cpuset takes no process until it has CPUs and memory nodes: a new one gets its
// parent's.
void make_cpuset_dir(const std::string& path) {
  make_dir(path);
  const std::string parent = fs::path(path).parent_path().string();
  for (const char* file : {"/cpuset.cpus", "/cpuset.mems"}) {
    auto mine = read_file(path + file);
    if (mine && mine->find_first_not_of(" \n") != std::string::npos) continue;
    auto theirs = read_file(parent + file);
    if (!theirs || !write_file(path + file, *theirs))
      throw std::runtime_error("cannot set " + path + file + ": " + std::strerror(errno));
  }
}

// The processes of a cgroup and of every cgroup below it.
void collect_pids(const std::string& dir, std::vector<pid_t>& out) {
  if (auto procs = read_file(dir + "/cgroup.procs")) {
    std::istringstream in(*procs);
    for (pid_t pid; in >> pid;) out.push_back(pid);
  }
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.is_directory(ec)) collect_pids(e.path().string(), out);
}

// Depth first, so each cgroup is empty of children when it goes.
bool remove_tree(const std::string& dir) {
  if (!exists(dir)) return true;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.is_directory(ec)) remove_tree(e.path().string());
  return ::rmdir(dir.c_str()) == 0 || errno == ENOENT;
}

std::vector<uint64_t> job_ids_under(const std::string& dir) {
  std::vector<uint64_t> ids;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (!e.is_directory(ec) || name.rfind("job_", 0) != 0) continue;
    try {
      ids.push_back(std::stoull(name.substr(4)));
    } catch (const std::exception&) {
    }
  }
  return ids;
}
}  // namespace

std::string CgroupLayout::describe() const {
  if (track.empty()) return "none";
  std::string text = "jobs tracked in cgroup " + std::string(track_v2 ? "v2 " : "v1 ") + track;
  if (memory.empty())
    text += ", no memory controller (memory is not limited)";
  else
    text += ", memory limited in cgroup " + std::string(memory_v2 ? "v2 " : "v1 ") + memory;
  if (cpuset.empty())
    text += ", no cpuset controller (ConstrainCores has no effect)";
  else
    text += ", CPUs confined in cgroup " + std::string(cpuset_v2 ? "v2 " : "v1 ") + cpuset;
  if (devices.empty())
    text += track_v2 && memory_v2 ? ", devices not confined (cgroup v2 has no devices controller "
                                    "files: ConstrainDevices has no effect)"
                                  : ", no devices controller (ConstrainDevices has no effect)";
  else
    text += ", devices confined in cgroup v1 " + devices;
  return text;
}

CgroupLayout detect_cgroups(const std::string& root) {
  CgroupLayout l;
  for (const std::string& v2 : {root, root + "/unified"}) {
    auto controllers = read_file(v2 + "/cgroup.controllers");
    if (!controllers) continue;
    l.track = v2;
    l.track_v2 = true;
    if (has_word(*controllers, "memory")) {
      l.memory = v2;
      l.memory_v2 = true;
    }
    break;
  }
  if (l.track.empty() && exists(root + "/freezer/cgroup.procs")) l.track = root + "/freezer";
  if (l.memory.empty() && !l.track.empty() && exists(root + "/memory/memory.limit_in_bytes"))
    l.memory = root + "/memory";
  if (l.track_v2)
    if (auto controllers = read_file(l.track + "/cgroup.controllers");
        controllers && has_word(*controllers, "cpuset")) {
      l.cpuset = l.track;
      l.cpuset_v2 = true;
    }
  if (l.cpuset.empty() && !l.track.empty() && exists(root + "/cpuset/cpuset.cpus"))
    l.cpuset = root + "/cpuset";
  if (!l.track.empty() && exists(root + "/devices/devices.deny")) l.devices = root + "/devices";
  return l;
}

int64_t cgroup_counter(const std::string& text, const std::string& key) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::string k;
    int64_t v = 0;
    if (words >> k >> v && k == key) return v;
  }
  return 0;
}

std::string node_cgroup_name(const std::string& node, const std::string& spool_dir) {
  std::error_code ec;
  std::string path = fs::absolute(spool_dir, ec).lexically_normal().string();
  if (ec) path = spool_dir;
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  uint64_t h = 14695981039346656037ULL;  // FNV-1a: stable across builds and restarts
  for (unsigned char c : path) h = (h ^ c) * 1099511628211ULL;
  char tag[9];
  std::snprintf(tag, sizeof tag, "%08x", static_cast<unsigned>(h ^ (h >> 32)));
  return "drover/" + node + "_" + tag;
}

ProcTrack::ProcTrack(const std::string& node, const std::string& spool_dir, const std::string& root)
    : name_(node_cgroup_name(node, spool_dir)) {
  if (const char* mode = std::getenv("DROVER_PROCTRACK"); mode && std::string(mode) == "pgid") {
    // As Slurm's ProctrackType=proctrack/pgid.
    spdlog::warn(
        "DROVER_PROCTRACK=pgid: jobs are not confined to cgroups (their processes are "
        "killed by process group; memory is not limited)");
    return;
  }
  if (::geteuid() != 0) {
    spdlog::warn(
        "not root: jobs are not confined to cgroups (their processes are killed by "
        "process group; memory is not limited)");
    return;
  }
  layout_ = detect_cgroups(root);
  if (layout_.track.empty()) {
    spdlog::warn(
        "no usable cgroup hierarchy under {}: jobs are killed by process group, memory "
        "is not limited",
        root);
    return;
  }
  try {
    make_dir(layout_.track + "/drover");
    make_dir(layout_.track + "/" + name_);
  } catch (const std::exception& e) {
    spdlog::warn("{}: jobs are killed by process group, memory is not limited", e.what());
    layout_ = {};
    return;
  }
  if (layout_.memory_v2) {
    // Each level down to the agent's subtree hands the memory controller to its children.
    for (const std::string& dir :
         {layout_.memory, layout_.memory + "/drover", layout_.memory + "/" + name_}) {
      if (!write_file(dir + "/cgroup.subtree_control", "+memory")) {
        spdlog::warn("cannot enable the memory controller in {}: {}", dir, std::strerror(errno));
        layout_.memory.clear();
        break;
      }
    }
  } else if (!layout_.memory.empty()) {
    try {
      make_dir(layout_.memory + "/drover");
      make_dir(layout_.memory + "/" + name_);
    } catch (const std::exception& e) {
      spdlog::warn("{}", e.what());
      layout_.memory.clear();
    }
  }
  if (layout_.cpuset_v2) {
    for (const std::string& dir :
         {layout_.cpuset, layout_.cpuset + "/drover", layout_.cpuset + "/" + name_}) {
      if (!write_file(dir + "/cgroup.subtree_control", "+cpuset")) {
        spdlog::warn("cannot enable the cpuset controller in {}: {}", dir, std::strerror(errno));
        layout_.cpuset.clear();
        break;
      }
    }
  } else if (!layout_.cpuset.empty()) {
    try {
      make_cpuset_dir(layout_.cpuset + "/drover");
      make_cpuset_dir(layout_.cpuset + "/" + name_);
    } catch (const std::exception& e) {
      spdlog::warn("{}", e.what());
      layout_.cpuset.clear();
    }
  }
  if (!layout_.devices.empty()) {
    try {
      make_dir(layout_.devices + "/drover");
      make_dir(layout_.devices + "/" + name_);
    } catch (const std::exception& e) {
      spdlog::warn("{}", e.what());
      layout_.devices.clear();
    }
  }
  spdlog::info("confining jobs: {}, under {}", layout_.describe(), name_);
}

ProcTrack::~ProcTrack() {
  if (!enabled() || keep_subtree_) return;
  ::rmdir((layout_.track + "/" + name_).c_str());
  if (limits_memory() && !layout_.memory_v2) ::rmdir((layout_.memory + "/" + name_).c_str());
  if (!layout_.cpuset.empty() && !layout_.cpuset_v2)
    ::rmdir((layout_.cpuset + "/" + name_).c_str());
  if (!layout_.devices.empty()) ::rmdir((layout_.devices + "/" + name_).c_str());
}

std::string ProcTrack::track_dir(uint64_t job, const std::string& step) const {
  std::string dir = layout_.track + "/" + name_ + "/job_" + std::to_string(job);
  return step.empty() ? dir : dir + "/step_" + step;
}

std::string ProcTrack::memory_dir(uint64_t job) const {
  return layout_.memory + "/" + name_ + "/job_" + std::to_string(job);
}

std::string ProcTrack::v1_dir(const std::string& root, uint64_t job,
                              const std::string& step) const {
  std::string dir = root + "/" + name_ + "/job_" + std::to_string(job);
  return step.empty() ? dir : dir + "/step_" + step;
}

void ProcTrack::limit_memory(uint64_t job, const std::string& mem, int64_t mem_mb,
                             const proto::Confine* confine) const {
  const bool v2 = layout_.memory_v2;
  int64_t hard = 0, soft = 0, memsw = 0;
  if (confine) {
    hard = confine->mem_hard;
    soft = confine->mem_soft;
    memsw = confine->memsw;
  } else if (mem_mb > 0) {
    // No swap beyond the limit either, where the host accounts for it.
    hard = memsw = mem_mb * 1024 * 1024;
  }
  if (hard > 0) {
    const std::string bytes = std::to_string(hard);
    // v1 takes a RAM limit only up to the RAM+swap one: that goes first when it is lower.
    if (!v2 && memsw > 0) write_file(mem + "/memory.memsw.limit_in_bytes", std::to_string(memsw));
    if (!write_file(mem + (v2 ? "/memory.max" : "/memory.limit_in_bytes"), bytes))
      spdlog::error("job {}: cannot limit its memory to {} bytes: {}", job, hard,
                    std::strerror(errno));
  }
  if (soft > 0 && !v2) write_file(mem + "/memory.soft_limit_in_bytes", std::to_string(soft));
  if (memsw > 0) {
    const std::string file = v2 ? "/memory.swap.max" : "/memory.memsw.limit_in_bytes";
    if (!exists(mem + file))
      spdlog::warn("job {}: the host does not account for swap ({}): swap is not limited", job,
                   file.substr(1));
    else if (!write_file(mem + file,
                         std::to_string(v2 ? std::max<int64_t>(memsw - hard, 0) : memsw)))
      spdlog::error("job {}: cannot limit its RAM+swap to {} bytes: {}", job, memsw,
                    std::strerror(errno));
  }
  if (confine && confine->swappiness >= 0 && !v2)
    write_file(mem + "/memory.swappiness", std::to_string(confine->swappiness));
}

std::optional<std::string> ProcTrack::confine_cpus(uint64_t job, const std::string& step,
                                                   const std::vector<int>& cpus) const {
  std::string list;
  for (int c : cpus) list += (list.empty() ? "" : ",") + std::to_string(c);
  if (layout_.cpuset_v2) {
    // The job's cgroup hands the controller to its steps', whose processes it confines.
    if (!write_file(track_dir(job, "") + "/cgroup.subtree_control", "+cpuset") ||
        !write_file(track_dir(job, step) + "/cpuset.cpus", list))
      spdlog::error("job {}: cannot confine step {} to CPUs {}: {}", job, step, list,
                    std::strerror(errno));
    return std::nullopt;
  }
  make_cpuset_dir(v1_dir(layout_.cpuset, job, ""));
  const std::string dir = v1_dir(layout_.cpuset, job, step);
  make_cpuset_dir(dir);
  if (!write_file(dir + "/cpuset.cpus", list))
    spdlog::error("job {}: cannot confine step {} to CPUs {}: {}", job, step, list,
                  std::strerror(errno));
  return dir + "/cgroup.procs";
}

std::optional<std::string> ProcTrack::confine_devices(uint64_t job, const std::string& step,
                                                      const std::vector<std::string>& deny) const {
  make_dir(v1_dir(layout_.devices, job, ""));
  const std::string dir = v1_dir(layout_.devices, job, step);
  make_dir(dir);
  for (const std::string& path : deny) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 || !(S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))) {
      spdlog::warn("job {}: {} is not a device file: not denied", job, path);
      continue;
    }
    const std::string rule = std::string(S_ISCHR(st.st_mode) ? "c " : "b ") +
                             std::to_string(major(st.st_rdev)) + ":" +
                             std::to_string(minor(st.st_rdev)) + " rwm";
    if (!write_file(dir + "/devices.deny", rule))
      spdlog::error("job {}: cannot deny {} ({}): {}", job, path, rule, std::strerror(errno));
  }
  return dir + "/cgroup.procs";
}

std::vector<int> ProcTrack::prepare(uint64_t job, const std::string& step, int64_t mem_mb,
                                    const proto::Confine* confine,
                                    const proto::Confine* step_memory) {
  std::vector<int> fds;
  if (!enabled() || (confine && !confine->cgroup)) return fds;
  const std::string step_dir = track_dir(job, step);
  make_dir(track_dir(job, ""));
  make_dir(step_dir);
  std::vector<std::string> procs = {step_dir + "/cgroup.procs"};
  if (limits_memory()) {
    const std::string mem = memory_dir(job);
    if (!layout_.memory_v2) make_dir(mem);
    limit_memory(job, mem, mem_mb, confine);
    std::string procs_dir = mem;
    if (step_memory) {
      if (layout_.memory_v2) {
        if (!write_file(track_dir(job, "") + "/cgroup.subtree_control", "+memory"))
          spdlog::error("job {}: no memory controller for step {}: {}", job, step,
                        std::strerror(errno));
        else
          limit_memory(job, step_dir, 0, step_memory);
      } else {
        procs_dir = mem + "/step_" + step;
        make_dir(procs_dir);
        limit_memory(job, procs_dir, 0, step_memory);
      }
    }
    if (!layout_.memory_v2) procs.push_back(procs_dir + "/cgroup.procs");
  }
  if (confine && !confine->cpus.empty()) {
    if (layout_.cpuset.empty())
      spdlog::warn("job {}: ConstrainCores: this host has no cpuset controller", job);
    else if (auto p = confine_cpus(job, step, confine->cpus))
      procs.push_back(*p);
  }
  if (confine && confine->constrain_devices) {
    if (layout_.devices.empty())
      spdlog::warn("job {}: ConstrainDevices: this host has no devices controller (v1)", job);
    else if (auto p = confine_devices(job, step, confine->deny_devices))
      procs.push_back(*p);
  }
  for (const auto& path : procs) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) {
      const int err = errno;
      for (int f : fds) ::close(f);
      throw std::runtime_error("cannot open " + path + ": " + std::strerror(err));
    }
    fds.push_back(fd);
  }
  return fds;
}

void ProcTrack::signal(uint64_t job, const std::string& step, int sig) const {
  if (!enabled()) return;
  std::vector<pid_t> pids;
  collect_pids(track_dir(job, step), pids);
  for (pid_t pid : pids) ::kill(pid, sig);
}

void ProcTrack::kill(uint64_t job, const std::string& step) const {
  if (!enabled()) return;
  const std::string dir = track_dir(job, step);
  if (layout_.track_v2 && write_file(dir + "/cgroup.kill", "1")) return;
  // No cgroup.kill: frozen, nothing can fork while each process gets SIGKILL; a few rounds
  // catch what was being created meanwhile.
  const std::string freeze = layout_.track_v2 ? dir + "/cgroup.freeze" : dir + "/freezer.state";
  for (int round = 0; round < 10; ++round) {
    std::vector<pid_t> pids;
    collect_pids(dir, pids);
    if (pids.empty()) return;
    write_file(freeze, layout_.track_v2 ? "1" : "FROZEN");
    pids.clear();
    collect_pids(dir, pids);
    for (pid_t pid : pids) ::kill(pid, SIGKILL);
    write_file(freeze, layout_.track_v2 ? "0" : "THAWED");
  }
}

bool ProcTrack::populated(uint64_t job, const std::string& step) const {
  if (!enabled()) return false;
  const std::string dir = track_dir(job, step);
  if (layout_.track_v2) {
    auto events = read_file(dir + "/cgroup.events");
    return events && cgroup_counter(*events, "populated") != 0;
  }
  std::vector<pid_t> pids;
  collect_pids(dir, pids);
  return !pids.empty();
}

ProcTrack::Usage ProcTrack::usage(uint64_t job) const {
  Usage u;
  if (!enabled() || !limits_memory()) return u;
  const std::string mem = memory_dir(job);
  if (layout_.memory_v2) {
    if (auto events = read_file(mem + "/memory.events"))
      u.oom_kills = cgroup_counter(*events, "oom_kill");
    if (auto peak = read_file(mem + "/memory.peak")) u.max_rss_bytes = std::atoll(peak->c_str());
  } else {
    if (auto oom = read_file(mem + "/memory.oom_control"))
      u.oom_kills = cgroup_counter(*oom, "oom_kill");
    if (auto peak = read_file(mem + "/memory.max_usage_in_bytes"))
      u.max_rss_bytes = std::atoll(peak->c_str());
  }
  return u;
}

bool ProcTrack::remove(uint64_t job, const std::string& step) const {
  if (!enabled()) return true;
  bool gone = remove_tree(track_dir(job, step));
  if (limits_memory() && !layout_.memory_v2)
    gone = remove_tree(step.empty() ? memory_dir(job) : memory_dir(job) + "/step_" + step) && gone;
  if (!layout_.cpuset.empty() && !layout_.cpuset_v2)
    gone = remove_tree(v1_dir(layout_.cpuset, job, step)) && gone;
  if (!layout_.devices.empty()) gone = remove_tree(v1_dir(layout_.devices, job, step)) && gone;
  return gone;
}

std::vector<uint64_t> ProcTrack::kill_leftovers(
    std::chrono::milliseconds wait, const std::set<std::pair<uint64_t, std::string>>& keep) const {
  if (!enabled()) return {};
  std::set<uint64_t> kept_jobs;
  for (const auto& k : keep) kept_jobs.insert(k.first);
  std::vector<uint64_t> ids;
  for (uint64_t id : job_ids_under(layout_.track + "/" + name_)) {
    if (!kept_jobs.count(id)) {
      ids.push_back(id);
      continue;
    }
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(track_dir(id, ""), ec)) {
      const std::string name = e.path().filename().string();
      if (!e.is_directory(ec) || name.rfind("step_", 0) != 0) continue;
      const std::string step = name.substr(5);
      if (keep.count({id, step})) continue;
      kill(id, step);
      const auto deadline = std::chrono::steady_clock::now() + wait;
      while (populated(id, step) && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        kill(id, step);
      }
      if (!remove(id, step))
        spdlog::error("job {}: step {} a previous agent left is still there", id, step);
      else
        spdlog::warn("job {}: removed step {} a previous agent left", id, step);
    }
  }
  for (uint64_t id : ids) {
    std::vector<pid_t> pids;
    collect_pids(track_dir(id, ""), pids);
    if (!pids.empty())
      spdlog::warn("job {}: killing {} process(es) a previous agent of this node left running", id,
                   pids.size());
    kill(id);
  }
  const auto deadline = std::chrono::steady_clock::now() + wait;
  for (uint64_t id : ids) {
    while (populated(id) && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      kill(id);
    }
    if (populated(id))
      spdlog::error("job {}: processes a previous agent left are still there after {} ms", id,
                    wait.count());
    else
      remove(id);
  }
  // Memory cgroups (v1) of jobs whose tracking cgroup had already gone.
  if (limits_memory() && !layout_.memory_v2)
    for (uint64_t id : job_ids_under(layout_.memory + "/" + name_))
      if (!kept_jobs.count(id)) remove_tree(memory_dir(id));
  for (const std::string& root :
       {layout_.cpuset_v2 ? std::string() : layout_.cpuset, layout_.devices}) {
    if (root.empty()) continue;
    for (uint64_t id : job_ids_under(root + "/" + name_))
      if (!kept_jobs.count(id)) remove_tree(v1_dir(root, id, ""));
  }
  return ids;
}

bool place_self(const std::vector<int>& fds) {
  char buf[24];
  int n = 0;
  char digits[24];
  for (long v = static_cast<long>(::getpid()); v > 0; v /= 10) digits[n++] = '0' + (v % 10);
  for (int i = 0; i < n; ++i) buf[i] = digits[n - 1 - i];
  for (int fd : fds)
    if (::write(fd, buf, static_cast<size_t>(n)) != n) return false;
  return true;
}

}  // namespace drover::agent
