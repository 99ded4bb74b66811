#include "drover/local_cluster.hpp"

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "agent/stepd_proto.hpp"
#include "core/hostlist.hpp"
#include "core/slurm_conf.hpp"
#include "core/text.hpp"
#include "drover/netns.hpp"
#include "net/auth.hpp"
#include "net/fd_io.hpp"
#include "net/keys.hpp"
#include "net/unix_client.hpp"
#include "nlohmann/json.hpp"
#include "proto/request.hpp"

namespace drover::tool {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

fs::path self_dir() { return fs::read_symlink("/proc/self/exe").parent_path(); }

std::string read_file(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Writes `text` to `path`, created with `mode` and kept at it whatever our umask: the state
// directory's files are its user's alone (0600) except env.sh, which every user sources.
void write_file(const fs::path& path, const std::string& text, mode_t mode) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0)
    throw std::runtime_error("cannot write " + path.string() + ": " + std::strerror(errno));
  bool ok = ::fchmod(fd, mode) == 0;
  ok = ok && net::write_fully(fd, text);
  const int err = errno;
  ::close(fd);
  if (!ok) throw std::runtime_error("cannot write " + path.string() + ": " + std::strerror(err));
}

// What a state directory may show others: its files are 0600 (scripts, environments, accounting,
// logs); the directory and the spool directories 0711, so that every user reaches the
// controller's socket and jobs reach their own job directory by name, but nobody lists them.
constexpr mode_t kDirMode = 0711;

// A state directory of an earlier drover (0755, files 0644) is tightened once, with a line.
void tighten_state_dir(const fs::path& dir) {
  int changed = 0;
  auto restrict_to = [&](const fs::path& p, mode_t want) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0 || (st.st_mode & 07777) == want) return;
    if (::chmod(p.c_str(), want) == 0) ++changed;
  };
  restrict_to(dir, kDirMode);
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    struct stat st {};
    if (::lstat(e.path().c_str(), &st) != 0) continue;
    if (S_ISREG(st.st_mode) && e.path().filename() != "env.sh")
      restrict_to(e.path(), st.st_mode & 0700);
  }
  if (fs::is_directory(dir / "spool", ec)) {
    restrict_to(dir / "spool", kDirMode);
    for (const auto& e : fs::directory_iterator(dir / "spool", ec))
      if (e.is_directory(ec) && !e.is_symlink(ec)) restrict_to(e.path(), kDirMode);
  }
  // A directory given to `drover up` for a new cluster (fs::exists) is not worth a line.
  if (changed > 0 && fs::exists(dir / "slurm.conf", ec))
    std::cout << "drover: " << dir.string() << " was readable by other users: made " << changed
              << " of its files and directories readable by their owner only\n";
}

int free_tcp_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  int port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0)
    port = ntohs(addr.sin_port);
  ::close(fd);
  if (port == 0) throw std::runtime_error("no free TCP port on loopback");
  return port;
}

pid_t read_pid(const fs::path& pid_file) {
  std::ifstream in(pid_file);
  pid_t pid = 0;
  in >> pid;
  return pid;
}

// A pid file names a live process of ours only if that process runs the expected binary.
// Whether the process has exited. A daemon's parent is init, which may take a while to reap it:
// a zombie has exited too (kill(pid, 0) still succeeds on it).
bool gone(pid_t pid) {
  if (::kill(pid, 0) != 0) return true;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return true;
  const size_t close = line.rfind(')');  // the state follows "pid (comm) "
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'Z';
}

bool alive(const fs::path& pid_file, const std::string& binary) {
  pid_t pid = read_pid(pid_file);
  if (pid <= 0 || gone(pid)) return false;
  std::error_code ec;
  std::string exe = fs::read_symlink("/proc/" + std::to_string(pid) + "/exe", ec).string();
  // A daemon whose binary was replaced since it started (a rebuild, an upgrade) is still ours:
  // the kernel names its executable "PATH (deleted)".
  constexpr std::string_view kDeleted = " (deleted)";
  if (exe.ends_with(kDeleted)) exe.resize(exe.size() - kDeleted.size());
  return !ec && fs::path(exe).filename() == binary;
}

// With `enter`, the daemon runs in that node's network namespace (netns.hpp).
pid_t spawn_daemon(const std::vector<std::string>& argv, const fs::path& log,
                   const fs::path& pid_file, const netns::Entry* enter = nullptr) {
  pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::setsid();
    // The daemons create what they write (journal, accounting, keys) as their own only.
    ::umask(077);
    int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
    int null = ::open("/dev/null", O_RDONLY);
    if (fd >= 0) {
      ::dup2(fd, 1);
      ::dup2(fd, 2);
    }
    if (null >= 0) ::dup2(null, 0);
    if (enter && !netns::enter(*enter)) ::_exit(126);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    std::fprintf(stderr, "drover: cannot run %s: %s\n", args[0], std::strerror(errno));
    ::_exit(127);
  }
  write_file(pid_file, std::to_string(pid) + "\n", 0600);
  return pid;
}

json ping(const fs::path& socket) {
  net::UnixClient client;
  client.connect(socket.string());
  return json::parse(client.call(proto::QueryRequest{.what = "ping"}.to_json().dump()));
}

std::string tail(const fs::path& log, size_t lines) {
  std::vector<std::string> all;
  std::ifstream in(log);
  for (std::string l; std::getline(in, l);) all.push_back(l);
  std::string out;
  for (size_t i = all.size() > lines ? all.size() - lines : 0; i < all.size(); ++i)
    out += "  " + all[i] + "\n";
  return out;
}

// With a netns plan the controller listens on the bridge's address and every node has its own.
std::string default_conf(const UpOptions& o, int port, int http_port, const netns::Plan* plan) {
  const int nodes = o.nodes > 0 ? o.nodes : 1;
  int cpus = o.cpus > 0 ? o.cpus : static_cast<int>(::sysconf(_SC_NPROCESSORS_ONLN));
  long long mem = o.mem_mb > 0 ? o.mem_mb
                               : static_cast<long long>(::sysconf(_SC_PHYS_PAGES)) *
                                     ::sysconf(_SC_PAGE_SIZE) / (1024 * 1024);
  const char* user = std::getenv("USER");
  // The controller is named as Slurm names it, by this machine's short host name.
  char host[256] = "localhost";
  if (::gethostname(host, sizeof host - 1) != 0) std::snprintf(host, sizeof host, "localhost");
  if (char* dot = std::strchr(host, '.')) *dot = '\0';
  std::ostringstream c;
  c << "# Written by `drover up`. Edit it and run `drover up` again to apply.\n"
    << "ClusterName=drover\n"
    << "SlurmctldHost=" << host << "(" << (plan ? plan->bridge_ip() : "127.0.0.1") << ")\n"
    << "SlurmctldPort=" << port << "\n"
    << "DroverHttpPort=" << http_port << "\n"  // metrics and the REST API
    << "SlurmUser=" << (::geteuid() == 0 ? "root" : (user ? user : "root")) << "\n"
    << "SlurmdTimeout=300\n"
    << "KillWait=30\n"
    << "MinJobAge=300\n"
    // Jobs without --mem get a CPU's share of memory, so small jobs can share a node.
    << "DefMemPerCPU=" << std::max(1LL, mem / cpus) << "\n";
  // Partitions given with --set come after the default one (the order sinfo lists them in).
  std::vector<std::string> partitions;
  for (const auto& s : o.settings) {
    if (s.rfind("PartitionName=", 0) == 0)
      partitions.push_back(s);
    else
      c << s << "\n";
  }
  if (o.node_conf.empty()) {
    c << "NodeName="
      << (nodes == 1 ? std::string("node1") : "node[1-" + std::to_string(nodes) + "]");
    if (plan) {
      c << " NodeAddr=";
      for (int i = 0; i < nodes; ++i) c << (i ? "," : "") << plan->node_ip(i);
    }
    c << " CPUs=" << cpus << " RealMemory=" << mem << " State=UNKNOWN\n";
  } else {
    // Unlike nodes: a line each, --node-conf's keys replacing the generated ones.
    for (int i = 0; i < nodes; ++i) {
      std::vector<std::pair<std::string, std::string>> attrs = {
          {"CPUs", std::to_string(cpus)}, {"RealMemory", std::to_string(mem)}};
      if (plan) attrs.insert(attrs.begin(), {"NodeAddr", plan->node_ip(i)});
      if (auto it = o.node_conf.find(i + 1); it != o.node_conf.end()) {
        for (const auto& word : core::split_list(it->second, ' ')) {
          if (word.empty()) continue;
          const std::string key = word.substr(0, word.find('='));
          const std::string val =
              word.find('=') == std::string::npos ? "" : word.substr(key.size() + 1);
          auto same = std::find_if(attrs.begin(), attrs.end(),
                                   [&](const auto& a) { return core::iequals(a.first, key); });
          if (same != attrs.end())
            same->second = val;
          else
            attrs.emplace_back(key, val);
        }
      }
      c << "NodeName=node" << i + 1;
      for (const auto& [k, v] : attrs) c << " " << k << "=" << v;
      c << " State=UNKNOWN\n";
    }
  }
  c << "PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP\n";
  for (const auto& p : partitions) c << p << "\n";
  return c.str();
}

bool wait_for(const std::function<bool()>& ready, int timeout_s) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  while (std::chrono::steady_clock::now() < deadline) {
    if (ready()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return ready();
}

// The name part of SlurmctldHost=name(address).
std::string control_host(const core::SlurmConf& conf) {
  std::string host = conf.get("SlurmctldHost", conf.get("ControlMachine", ""));
  return host.substr(0, host.find('('));
}

}  // namespace

int cluster_up(const UpOptions& opts) {
  const fs::path dir = fs::absolute(opts.state_dir);
  std::optional<netns::Plan> plan;
  try {
    plan = netns::load(dir);
  } catch (const std::exception& e) {
    std::cerr << "drover: " << e.what() << '\n';
    return 1;
  }
  if ((opts.netns || plan) && ::geteuid() != 0) {
    std::cerr << "drover: " << (plan ? dir.string() + " holds a --netns cluster: it" : "--netns")
              << " needs root (it creates network namespaces, a bridge and veth pairs); run "
                 "drover as root\n";
    return 1;
  }
  if (opts.netns && !plan && fs::exists(dir / "slurm.conf")) {
    std::cerr << "drover: " << dir.string()
              << " holds a cluster made without --netns; use another --state-dir for --netns\n";
    return 1;
  }
  // The socket stays in the state directory (0711): every user reaches it by name, as
  // DROVER_SOCKET and the commands' default search name it; nothing else there is theirs.
  if (fs::exists(dir)) {
    tighten_state_dir(dir);
  } else {
    fs::create_directories(dir.parent_path());
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
      std::cerr << "drover: cannot create " << dir.string() << ": " << std::strerror(errno) << '\n';
      return 1;
    }
    ::chmod(dir.c_str(), kDirMode);
  }
  const fs::path conf_path = dir / "slurm.conf";
  // The controller's secret (agents never read it); each agent gets its node's key,
  // derived from it, in a file of its own.
  const fs::path key_path = dir / "cluster.key";
  const fs::path socket = dir / "ctld.sock";
  const std::string master = net::load_or_create_key(key_path.string());

  // Held from choosing a subnet until its bridge has its address: clusters started at the
  // same time pick different ones.
  std::optional<netns::Lock> netns_lock;
  if (opts.netns || plan) {
    try {
      netns_lock.emplace();
      if (!plan) plan = netns::create(dir);
    } catch (const std::exception& e) {
      std::cerr << "drover: " << e.what() << '\n';
      return 1;
    }
  }

  if (!fs::exists(conf_path)) {
    const int port = free_tcp_port();
    int http_port = free_tcp_port();
    while (http_port == port) http_port = free_tcp_port();
    write_file(conf_path, default_conf(opts, port, http_port, plan ? &*plan : nullptr), 0600);
  } else if (!opts.settings.empty() || opts.cpus > 0 || opts.mem_mb > 0 ||
             !opts.node_conf.empty()) {
    std::cerr << "drover: " << conf_path.string()
              << " exists; edit it instead of passing --cpus/--mem/--set/--node-conf\n";
    return 1;
  }
  core::SlurmConf conf;
  try {
    conf = core::parse_slurm_conf(read_file(conf_path), conf_path.string());
  } catch (const std::exception& e) {
    std::cerr << "drover: " << e.what() << '\n';
    return 1;
  }
  if (opts.nodes > 0 && static_cast<int>(conf.nodes.size()) != opts.nodes) {
    std::cerr << "drover: " << dir.string() << " holds a cluster of " << conf.nodes.size()
              << " nodes; use another --state-dir for " << opts.nodes << '\n';
    return 1;
  }
  for (const auto& w : conf.warnings) std::cerr << "drover: warning: " << w << '\n';
  const int port = static_cast<int>(conf.get_int("SlurmctldPort", 6817));
  const fs::path bin = self_dir();

  if (plan) {
    std::vector<netns::Node> nodes;
    std::set<std::string> addrs;
    for (const auto& node : conf.nodes) {
      if (!plan->contains(node.node_addr) || !addrs.insert(node.node_addr).second) {
        std::cerr << "drover: node " << node.name << ": NodeAddr=" << node.node_addr
                  << " in slurm.conf is not an address of its own in the cluster's subnet "
                  << plan->subnet() << " (.2 to .254)\n";
        return 1;
      }
      nodes.push_back(
          {node.name, node.node_addr, alive(dir / ("agent-" + node.name + ".pid"), "droverd")});
    }
    std::vector<std::string> extra_hosts;
    if (const std::string host = control_host(conf); !host.empty())
      extra_hosts.push_back(plan->bridge_ip() + " " + host);
    try {
      netns::setup(*plan, dir, nodes, extra_hosts);
    } catch (const std::exception& e) {
      std::cerr << "drover: setting up the network namespaces: " << e.what() << "\n"
                << "drover: `drover down --state-dir " << dir.string()
                << "` removes what was set up\n";
      return 1;
    }
    netns_lock.reset();
  }

  if (!alive(dir / "ctld.pid", "droverctld")) {
    spawn_daemon(
        {(bin / "droverctld").string(), "--conf", conf_path.string(), "--state-dir", dir.string()},
        dir / "ctld.log", dir / "ctld.pid");
  }
  bool ctld_ready = wait_for(
      [&] {
        try {
          return ping(socket).value("ok", false);
        } catch (const std::exception&) {
          return false;
        }
      },
      opts.timeout_s);
  if (!ctld_ready) {
    std::cerr << "drover: the controller did not come up; its log ends with:\n"
              << tail(dir / "ctld.log", 15);
    return 1;
  }

  // Agents in namespaces dial the controller at the bridge's address.
  const std::string controller =
      (plan ? plan->bridge_ip() : "127.0.0.1") + ":" + std::to_string(port);
  for (const auto& node : conf.nodes) {
    const fs::path pid_file = dir / ("agent-" + node.name + ".pid");
    if (alive(pid_file, "droverd")) continue;
    const fs::path spool = dir / "spool" / node.name;
    fs::create_directories(spool);
    ::chmod((dir / "spool").c_str(), kDirMode);
    ::chmod(spool.c_str(), kDirMode);
    std::optional<netns::Entry> entry;
    if (plan) entry = netns::entry_for(*plan, node.name);
    const fs::path node_key = dir / ("node-" + node.name + ".key");
    if (!fs::exists(node_key)) net::write_key(node_key.string(), net::node_key(master, node.name));
    // --listen: where srun reaches the agent, the node's own address. No --auth-socket: the
    // nodes share this host's file system, so commands there use the controller's socket.
    spawn_daemon({(bin / "droverd").string(), "--node", node.name, "--controller", controller,
                  "--key-file", node_key.string(), "--spool", spool.string(), "--listen",
                  plan ? node.node_addr : "127.0.0.1", "--cpus", std::to_string(node.cpus), "--mem",
                  std::to_string(node.real_memory_mb)},
                 dir / ("agent-" + node.name + ".log"), pid_file, entry ? &*entry : nullptr);
  }
  json last;
  bool all_registered = wait_for(
      [&] {
        try {
          last = ping(socket);
          return last.value("nodes_registered", 0) == last.value("nodes_total", -1);
        } catch (const std::exception&) {
          return false;
        }
      },
      opts.timeout_s);
  if (!all_registered) {
    std::cerr << "drover: only " << last.value("nodes_registered", 0) << " of " << conf.nodes.size()
              << " agents registered; see " << (dir / "agent-*.log").string() << "\n";
    for (const auto& node : conf.nodes)
      if (!alive(dir / ("agent-" + node.name + ".pid"), "droverd"))
        std::cerr << "drover: the agent of " << node.name << " exited; its log ends with:\n"
                  << tail(dir / ("agent-" + node.name + ".log"), 5);
    return 1;
  }

  const fs::path slurm_bin = fs::weakly_canonical(bin / ".." / "slurm-bin");
  std::string dashboard;  // the web dashboard's address, when there is an HTTP port
  // The commands' man pages (written by drover-man beside slurm-bin); the empty entry that
  // an unset MANPATH leaves keeps man's default search path too.
  const fs::path man_dir = fs::weakly_canonical(bin / ".." / "man");
  std::ostringstream env_sh;
  env_sh << "# Source this to use the drover cluster in " << dir.string() << "\n"
         << "export DROVER_STATE_DIR='" << dir.string() << "'\n"
         << "export DROVER_SOCKET='" << socket.string() << "'\n"
         << "export PATH='" << slurm_bin.string() << "':\"$PATH\"\n"
         << "export MANPATH='" << man_dir.string() << "':\"${MANPATH:-}\"\n";
  if (const int64_t http_port = conf.get_int("DroverHttpPort", 0); http_port > 0) {
    std::string addr = conf.get("DroverHttpAddress", "127.0.0.1");
    if (addr == "0.0.0.0") addr = "127.0.0.1";
    // The REST API (docs/internals/controller.md, "REST API and tokens") shares the metrics port.
    const std::string base = "http://" + addr + ":" + std::to_string(http_port);
    env_sh << "export DROVER_API=" << base << "\n"
           << "export DROVER_METRICS_URL=" << base << "/metrics\n"
           << "export DROVER_UI=" << base << "/ui/\n";
    dashboard = base + "/ui/";
  }
  write_file(dir / "env.sh", env_sh.str(), 0644);
  std::vector<std::string> names;
  for (const auto& n : conf.nodes) names.push_back(n.name);
  std::cout << "drover: cluster '" << (conf.cluster_name.empty() ? "drover" : conf.cluster_name)
            << "' is up with " << names.size() << " node(s) " << core::compress_hostlist(names)
            << "\n";
  if (plan && !names.empty())
    std::cout << "drover: each node in its own network namespace (" << plan->ns("NODE") << ") on "
              << plan->subnet() << ", the controller at " << plan->bridge_ip()
              << "; `ip netns exec " << plan->ns(names.front()) << " CMD` runs CMD on "
              << names.front() << "\n";
  std::cout << "drover: run `source " << (dir / "env.sh").string()
            << "` to use sbatch, squeue, ...\n";
  if (!dashboard.empty()) {
    // A token for whoever ran `drover up`, in the fragment (never sent to the server, and the
    // page removes it from the address bar); it lasts as long as `scontrol token`'s default.
    std::string token;
    try {
      net::UnixClient client;
      client.connect(socket.string());
      const json r = json::parse(client.call(proto::TokenRequest{}.to_json().dump()));
      token = r.value("token", "");
    } catch (const std::exception&) {
    }
    std::cout << "drover: the dashboard: " << dashboard
              << (token.empty() ? std::string() : "#token=" + token)
              << (token.empty() ? " (log in with `scontrol token`)\n"
                                : "\n        (that link logs you in for 30 minutes; after that, "
                                  "paste a token from `scontrol token`)\n");
  }
  return 0;
}

int node_key_file(const std::string& state_dir, const std::string& host, const std::string& out) {
  const fs::path master_path = fs::absolute(state_dir) / "cluster.key";
  if (!fs::exists(master_path)) {
    std::cerr << "drover: no controller secret " << master_path.string()
              << " (the controller makes it when it first starts)\n";
    return 1;
  }
  const std::string key = net::node_key(net::load_key(master_path.string()), host);
  if (out.empty()) {
    std::cout << key << '\n';
    return 0;
  }
  net::write_key(out, key);
  std::cout << "drover: key of " << host << " written to " << out << '\n';
  return 0;
}

int cluster_down(const std::string& state_dir) {
  const fs::path dir = fs::absolute(state_dir);
  if (!fs::exists(dir / "ctld.pid") && !fs::exists(dir / "slurm.conf")) {
    std::cerr << "drover: no cluster in " << dir.string() << '\n';
    return 1;
  }
  const std::optional<netns::Plan> plan = netns::load(dir);
  if (plan && ::geteuid() != 0) {
    std::cerr << "drover: " << dir.string()
              << " holds a --netns cluster: bringing it down needs root\n";
    return 1;
  }
  auto stop = [](const fs::path& pid_file, const std::string& binary, int wait_s) {
    if (alive(pid_file, binary)) {
      pid_t pid = read_pid(pid_file);
      ::kill(pid, SIGTERM);
      if (!wait_for([&] { return gone(pid); }, wait_s)) ::kill(pid, SIGKILL);
      wait_for([&] { return gone(pid); }, 5);
    }
    std::error_code ec;
    fs::remove(pid_file, ec);
  };
  // Agents first; the controller keeps the queue.
  std::vector<std::thread> stoppers;
  for (const auto& entry : fs::directory_iterator(dir)) {
    std::string name = entry.path().filename().string();
    if (name.rfind("agent-", 0) == 0 && entry.path().extension() == ".pid")
      stoppers.emplace_back(stop, entry.path(), "droverd", 10);
  }
  for (auto& t : stoppers) t.join();
  // A stopped agent leaves its batch jobs to their supervisors (as slurmd does); a local
  // cluster brought down ends them too. Their exits wait in each node's spool for the next up.
  std::error_code ec;
  if (fs::is_directory(dir / "spool", ec)) {
    stoppers.clear();
    for (const auto& entry : fs::directory_iterator(dir / "spool", ec))
      stoppers.emplace_back([spool = entry.path().string()] {
        if (int left = agent::stepd::terminate_all(spool, 2, std::chrono::seconds(15)); left > 0)
          std::cerr << "drover: " << left << " job supervisor(s) in " << spool << " did not end\n";
      });
    for (auto& t : stoppers) t.join();
  }
  stop(dir / "ctld.pid", "droverctld", 10);
  if (plan) {
    // Also after a crash: whatever of the cluster's network is still there goes.
    const netns::Lock lock;  // not while another cluster sets up (they share /etc/netns)
    const std::vector<std::string> left = netns::teardown(*plan, dir);
    for (const auto& l : left) std::cerr << "drover: " << l << '\n';
    if (!left.empty()) return 1;
  }
  std::cout << "drover: cluster in " << dir.string() << " stopped\n";
  return 0;
}

}  // namespace drover::tool
