#include "drover/netns.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>
#include <stdexcept>

namespace drover::tool::netns {
namespace fs = std::filesystem;
namespace {

struct CommandResult {
  int status = -1;  // exit status; -1 when it could not be started or was killed
  std::string out, err;
};

// The path of a program: PATH, then /usr/sbin, /sbin, /usr/bin, /bin; "" when there is none.
std::string find_program(const std::string& name) {
  if (name.find('/') != std::string::npos) return ::access(name.c_str(), X_OK) == 0 ? name : "";
  std::string dirs = std::getenv("PATH") ? std::getenv("PATH") : "";
  dirs += ":/usr/sbin:/sbin:/usr/bin:/bin";
  std::stringstream in(dirs);
  for (std::string dir; std::getline(in, dir, ':');) {
    if (dir.empty()) continue;
    const std::string path = dir + "/" + name;
    if (::access(path.c_str(), X_OK) == 0) return path;
  }
  return "";
}

// Runs a program (no shell) with stdin from /dev/null; returns its status and output.
CommandResult run_command(const std::vector<std::string>& argv) {
  CommandResult r;
  const std::string path = find_program(argv.at(0));
  if (path.empty()) {
    r.err = argv[0] + ": command not found";
    return r;
  }
  int out[2], err[2];
  if (::pipe2(out, O_CLOEXEC) != 0) {
    r.err = std::string("pipe: ") + std::strerror(errno);
    return r;
  }
  if (::pipe2(err, O_CLOEXEC) != 0) {
    r.err = std::string("pipe: ") + std::strerror(errno);
    ::close(out[0]);
    ::close(out[1]);
    return r;
  }
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int null = ::open("/dev/null", O_RDONLY);
    if (null >= 0) ::dup2(null, 0);
    ::dup2(out[1], 1);
    ::dup2(err[1], 2);
    ::execv(path.c_str(), args.data());
    std::fprintf(stderr, "cannot run %s: %s\n", path.c_str(), std::strerror(errno));
    ::_exit(127);
  }
  ::close(out[1]);
  ::close(err[1]);
  if (pid < 0) {
    r.err = std::string("fork: ") + std::strerror(errno);
    ::close(out[0]);
    ::close(err[0]);
    return r;
  }
  pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  std::string* sinks[2] = {&r.out, &r.err};
  int open_fds = 2;
  while (open_fds > 0) {
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      char buf[4096];
      const ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        sinks[i]->append(buf, static_cast<size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  for (auto& f : fds)
    if (f.fd >= 0) ::close(f.fd);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

constexpr const char* kNetnsRun = "/run/netns";
constexpr const char* kNetnsEtc = "/etc/netns";
constexpr const char* kSysNet = "/sys/class/net";
// Where clusters' /24s come from, in order: 10.213.0.0/16, then 172.30.0.0/16.
constexpr uint32_t kRanges[] = {0x0AD50000u, 0xAC1E0000u};

std::string ip_string(uint32_t a) {
  in_addr in{};
  in.s_addr = htonl(a);
  char buf[INET_ADDRSTRLEN] = "";
  ::inet_ntop(AF_INET, &in, buf, sizeof buf);
  return buf;
}

std::optional<uint32_t> parse_ip(const std::string& s) {
  in_addr in{};
  if (::inet_pton(AF_INET, s.c_str(), &in) != 1) return std::nullopt;
  return ntohl(in.s_addr);
}

struct Prefix {
  uint32_t addr = 0;
  int len = 32;
  std::string dev;  // the interface it is on, "" when none is named
};

std::optional<Prefix> parse_prefix(const std::string& s) {
  Prefix p;
  const auto slash = s.find('/');
  const auto a = parse_ip(s.substr(0, slash));
  if (!a) return std::nullopt;
  p.addr = *a;
  if (slash != std::string::npos) {
    try {
      p.len = std::stoi(s.substr(slash + 1));
    } catch (const std::exception&) {
      return std::nullopt;
    }
    if (p.len < 0 || p.len > 32) return std::nullopt;
  }
  return p;
}

bool overlaps(const Prefix& p, uint32_t net24) {
  const int len = std::min(p.len, 24);
  const uint32_t mask = len == 0 ? 0 : ~uint32_t{0} << (32 - len);
  return (p.addr & mask) == (net24 & mask);
}

std::vector<std::string> words(const std::string& line) {
  std::stringstream in(line);
  std::vector<std::string> w;
  for (std::string s; in >> s;) w.push_back(s);
  return w;
}

std::string command_line(const std::vector<std::string>& argv) {
  std::string s;
  for (const auto& a : argv) s += (s.empty() ? "" : " ") + a;
  return s;
}

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

// Runs a command that must succeed.
void check(const std::vector<std::string>& argv) {
  const CommandResult r = run_command(argv);
  if (r.status != 0)
    throw std::runtime_error("`" + command_line(argv) + "` failed" +
                             (r.err.empty() ? " (exit status " + std::to_string(r.status) + ")"
                                            : ": " + trimmed(r.err)));
}

// Every IPv4 address and route prefix of the host namespace (the default route left out).
std::vector<Prefix> host_prefixes() {
  std::vector<Prefix> all;
  const CommandResult addrs = run_command({"ip", "-4", "-o", "addr", "show"});
  if (addrs.status != 0)
    throw std::runtime_error("`ip -4 -o addr show` failed: " + trimmed(addrs.err));
  std::stringstream a(addrs.out);
  for (std::string line; std::getline(a, line);) {
    const auto w = words(line);  // "4: eth0    inet 192.0.2.2/24 brd ..."
    for (size_t i = 0; i + 1 < w.size(); ++i)
      if (w[i] == "inet")
        if (auto p = parse_prefix(w[i + 1])) {
          p->dev = w.size() > 1 ? w[1] : "";
          all.push_back(*p);
        }
  }
  const CommandResult routes = run_command({"ip", "-4", "route", "show", "table", "all"});
  if (routes.status != 0)
    throw std::runtime_error("`ip -4 route show table all` failed: " + trimmed(routes.err));
  static const std::vector<std::string> types = {"unicast", "local",       "broadcast", "multicast",
                                                 "throw",   "unreachable", "prohibit",  "blackhole",
                                                 "nat",     "anycast"};
  std::stringstream rs(routes.out);
  for (std::string line; std::getline(rs, line);) {
    const auto w = words(line);
    size_t i = 0;
    while (i < w.size() && std::find(types.begin(), types.end(), w[i]) != types.end()) ++i;
    if (i >= w.size() || w[i] == "default") continue;
    auto p = parse_prefix(w[i]);
    if (!p || p->len == 0) continue;
    for (size_t j = i; j + 1 < w.size(); ++j)
      if (w[j] == "dev") p->dev = w[j + 1];
    all.push_back(*p);
  }
  return all;
}

uint64_t fnv1a(const std::string& s) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  // MurmurHash3's finalizer: paths that differ in their last character (state dirs made by
  // mkdtemp) get unrelated high bits, where the subnet search starts.
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 33;
  return h;
}

bool has_entry_with_prefix(const fs::path& dir, const std::string& prefix) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().filename().string().rfind(prefix, 0) == 0) return true;
  return false;
}

std::vector<std::string> entries_with_prefix(const fs::path& dir, const std::string& prefix) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (std::string n = e.path().filename().string(); n.rfind(prefix, 0) == 0) names.push_back(n);
  return names;
}

bool tag_in_use(const std::string& tag) {
  return has_entry_with_prefix(kSysNet, "drv-" + tag + "-") ||
         has_entry_with_prefix(kSysNet, "drv" + tag + "h") ||
         has_entry_with_prefix(kNetnsRun, "drv-" + tag + "-") ||
         has_entry_with_prefix(kNetnsEtc, "drv-" + tag + "-");
}

bool link_exists(const std::string& name) { return fs::exists(fs::path(kSysNet) / name); }

std::string alias_of(const std::string& link) {
  std::ifstream in(fs::path(kSysNet) / link / "ifalias");
  std::string s;
  std::getline(in, s);
  return s;
}

// The bridge's alias names its cluster's state dir, however the dir was spelled.
std::string bridge_alias(const fs::path& state_dir) {
  std::error_code ec;
  const fs::path canonical = fs::weakly_canonical(state_dir, ec);
  return "drover " + (ec ? state_dir : canonical).string();
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The firewall rules that let the cluster's traffic through a host whose iptables would drop
// it: bridged frames between namespaces go through FORWARD when br_netfilter hands them to
// iptables (Docker sets FORWARD's policy to DROP), and agents reach the controller through
// INPUT. Both match the cluster's own bridge only.
std::vector<std::vector<std::string>> firewall_rules(const Plan& plan) {
  return {{"FORWARD", "-i", plan.bridge(), "-o", plan.bridge(), "-j", "ACCEPT"},
          {"INPUT", "-i", plan.bridge(), "-j", "ACCEPT"}};
}

bool bridged_frames_reach_iptables() {
  return trimmed(read_text("/proc/sys/net/bridge/bridge-nf-call-iptables")) == "1";
}

void open_firewall(const Plan& plan) {
  const std::string iptables = find_program("iptables");
  if (iptables.empty()) return;  // no iptables rules can be in the way
  for (const auto& rule : firewall_rules(plan)) {
    if (rule[0] == "FORWARD" && !bridged_frames_reach_iptables()) continue;
    std::vector<std::string> check_rule = {iptables, "-w", "-C"};
    check_rule.insert(check_rule.end(), rule.begin(), rule.end());
    if (run_command(check_rule).status == 0) continue;
    std::vector<std::string> insert = {iptables, "-w", "-I", rule[0], "1"};
    insert.insert(insert.end(), rule.begin() + 1, rule.end());
    check(insert);
  }
}

void close_firewall(const Plan& plan) {
  const std::string iptables = find_program("iptables");
  if (iptables.empty()) return;
  for (const auto& rule : firewall_rules(plan)) {
    std::vector<std::string> del = {iptables, "-w", "-D"};
    del.insert(del.end(), rule.begin(), rule.end());
    for (int i = 0; i < 16 && run_command(del).status == 0; ++i) {
    }
  }
}

}  // namespace

std::string Plan::subnet() const { return ip_string(net) + "/24"; }
std::string Plan::bridge_ip() const { return ip_string(net + 1); }
std::string Plan::bridge() const { return "drv-" + tag + "-br"; }
std::string Plan::ns(const std::string& node) const { return "drv-" + tag + "-" + node; }
std::string Plan::hosts_file(const std::string& node) const {
  return std::string(kNetnsEtc) + "/" + ns(node) + "/hosts";
}
std::string Plan::resolv_file(const std::string& node) const {
  return std::string(kNetnsEtc) + "/" + ns(node) + "/resolv.conf";
}
std::string Plan::host_veth(const std::string& ip) const {
  return "drv" + tag + "h" + std::to_string(parse_ip(ip).value_or(0) & 0xff);
}
bool Plan::contains(const std::string& ip) const {
  const auto a = parse_ip(ip);
  return a && (*a & 0xffffff00u) == net && (*a & 0xff) >= 2 && (*a & 0xff) <= 254;
}
std::string Plan::node_ip(int index) const {
  if (index < 0 || index > 252)
    throw std::runtime_error("--netns gives a cluster at most 253 nodes (one /24)");
  return ip_string(net + 2 + static_cast<uint32_t>(index));
}

Lock::Lock() {
  fd_ = ::open("/run/drover-netns.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd_ < 0) fd_ = ::open("/tmp/drover-netns.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd_ < 0) throw std::runtime_error(std::string("netns lock: ") + std::strerror(errno));
  while (::flock(fd_, LOCK_EX) != 0 && errno == EINTR) {
  }
}

Lock::~Lock() {
  if (fd_ >= 0) ::close(fd_);
}

std::optional<Plan> load(const fs::path& state_dir) {
  const fs::path file = state_dir / "netns";
  if (!fs::exists(file)) return std::nullopt;
  Plan plan;
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) {
    const auto eq = line.find('=');
    if (eq == std::string::npos) continue;
    const std::string key = line.substr(0, eq), value = line.substr(eq + 1);
    if (key == "tag") plan.tag = value;
    if (key == "subnet")
      if (auto p = parse_prefix(value); p && p->len == 24) plan.net = p->addr;
  }
  if (plan.tag.size() != 6 || plan.net == 0)
    throw std::runtime_error(file.string() + ": needs tag=<6 hex digits> and subnet=<a /24>");
  return plan;
}

Plan create(const fs::path& state_dir) {
  std::error_code ec;
  const std::string key = fs::weakly_canonical(state_dir, ec).string();
  Plan plan;
  for (int salt = 0; salt < 64 && plan.tag.empty(); ++salt) {
    char hex[16];
    std::snprintf(hex, sizeof hex, "%06llx",
                  static_cast<unsigned long long>(
                      fnv1a(salt == 0 ? key : key + "#" + std::to_string(salt)) & 0xffffff));
    if (!tag_in_use(hex)) plan.tag = hex;
  }
  if (plan.tag.empty()) throw std::runtime_error("no unused network namespace tag");
  const std::vector<Prefix> used = host_prefixes();
  const uint32_t start = static_cast<uint32_t>(fnv1a(key) >> 32) & 0xff;
  for (uint32_t range : kRanges) {
    for (uint32_t i = 0; i < 256 && plan.net == 0; ++i) {
      const uint32_t net = range | (((start + i) & 0xff) << 8);
      bool free = true;
      for (const auto& p : used) free = free && !overlaps(p, net);
      if (free) plan.net = net;
    }
    if (plan.net != 0) break;
  }
  if (plan.net == 0)
    throw std::runtime_error(
        "no free /24 in 10.213.0.0/16 or 172.30.0.0/16: this host's addresses and routes "
        "cover them all");
  std::ofstream(state_dir / "netns") << "# Written by `drover up --netns`: the names and the "
                                        "subnet of this cluster's network namespaces.\n"
                                     << "tag=" << plan.tag << "\nsubnet=" << plan.subnet() << "\n";
  return plan;
}

void setup(const Plan& plan, const fs::path& state_dir, const std::vector<Node>& nodes,
           const std::vector<std::string>& extra_hosts) {
  const std::string br = plan.bridge();
  const std::string alias = bridge_alias(state_dir);
  if (link_exists(br)) {
    if (const std::string a = alias_of(br); a != alias)
      throw std::runtime_error("the bridge " + br + " belongs to another cluster ('" + a +
                               "'); bring it down first");
  } else {
    for (const auto& p : host_prefixes())
      if (overlaps(p, plan.net))
        throw std::runtime_error(plan.subnet() + " (recorded in " + (state_dir / "netns").string() +
                                 ") overlaps " + ip_string(p.addr) + "/" + std::to_string(p.len) +
                                 (p.dev.empty() ? "" : " on " + p.dev) +
                                 " on this host; free it or use another --state-dir");
    check({"ip", "link", "add", "name", br, "type", "bridge"});
    check({"ip", "link", "set", "dev", br, "alias", alias});
  }
  check({"ip", "addr", "replace", plan.bridge_ip() + "/24", "dev", br});
  check({"ip", "link", "set", "dev", br, "up"});
  open_firewall(plan);

  // Every namespace gets the host's hosts file with the nodes' names first, so node names
  // resolve to their addresses inside the cluster; the host's own entries for those names
  // are left out (with `multi on` glibc would return both).
  std::string hosts = "# drover cluster " + state_dir.string() + "\n";
  std::set<std::string> ours;
  auto add = [&](const std::string& line) {
    hosts += line + "\n";
    const auto w = words(line);
    ours.insert(w.begin() + 1, w.end());
  };
  for (const auto& n : nodes) add(n.ip + " " + n.name);
  for (const auto& line : extra_hosts) add(line);
  hosts += "\n";
  std::stringstream host_hosts(read_text("/etc/hosts"));
  for (std::string line; std::getline(host_hosts, line);) {
    const auto w = words(line.substr(0, line.find('#')));
    if (w.size() < 2) {
      hosts += line + "\n";
      continue;
    }
    std::string kept = w[0];
    for (size_t i = 1; i < w.size(); ++i)
      if (!ours.count(w[i])) kept += " " + w[i];
    if (kept != w[0]) hosts += kept + "\n";
  }
  // Nothing routes out of the subnet, so the host's name servers are out of reach: a lookup
  // that misses the hosts file (getent asks for IPv6 first) fails at once instead of after
  // the resolver's timeouts.
  const std::string resolv =
      "# drover: no name server inside the cluster's namespaces (nothing routes out of " +
      plan.subnet() +
      "); names come from /etc/hosts\nnameserver 127.0.0.1\noptions timeout:1 attempts:1\n";

  for (const auto& n : nodes) {
    const std::string ns = plan.ns(n.name);
    fs::create_directories(fs::path(plan.hosts_file(n.name)).parent_path());
    // Written in place: an agent that runs has them bind-mounted (the same inodes) over its
    // /etc/hosts and /etc/resolv.conf.
    for (const auto& [file, text] :
         {std::pair{plan.hosts_file(n.name), hosts}, std::pair{plan.resolv_file(n.name), resolv}}) {
      std::ofstream out(file, std::ios::trunc);
      out << text;
      if (!out.flush())
        throw std::runtime_error("cannot write " + file + ": " + std::strerror(errno));
    }
    const std::string veth = plan.host_veth(n.ip);
    if (n.keep) {
      // Its agent runs in the namespace; its end goes (back) on the bridge.
      if (link_exists(veth)) check({"ip", "link", "set", "dev", veth, "master", br, "up"});
      continue;
    }
    // Whatever a crash left behind goes first: a veth pair dies with its host end.
    if (link_exists(veth)) check({"ip", "link", "del", "dev", veth});
    if (fs::exists(fs::path(kNetnsRun) / ns)) check({"ip", "netns", "del", ns});
    check({"ip", "netns", "add", ns});
    check({"ip", "link", "add", "name", veth, "type", "veth", "peer", "name", "eth0", "netns", ns});
    check({"ip", "link", "set", "dev", veth, "master", br, "up"});
    check({"ip", "-n", ns, "addr", "add", n.ip + "/24", "dev", "eth0"});
    check({"ip", "-n", ns, "link", "set", "dev", "eth0", "up"});
    check({"ip", "-n", ns, "link", "set", "dev", "lo", "up"});
    check({"ip", "-n", ns, "route", "add", "default", "via", plan.bridge_ip()});
  }
}

std::vector<std::string> teardown(const Plan& plan, const fs::path& state_dir) {
  std::vector<std::string> left;
  auto attempt = [&](const std::vector<std::string>& argv, const std::function<bool()>& gone) {
    const CommandResult r = run_command(argv);
    if (r.status != 0 && !gone())
      left.push_back("`" + command_line(argv) + "` failed: " + trimmed(r.err));
  };
  // Host ends first: deleting one takes its peer in the namespace with it, even when a
  // leftover process keeps the namespace itself alive.
  for (const auto& veth : entries_with_prefix(kSysNet, "drv" + plan.tag + "h"))
    attempt({"ip", "link", "del", "dev", veth}, [&] { return !link_exists(veth); });
  for (const auto& ns : entries_with_prefix(kNetnsRun, "drv-" + plan.tag + "-"))
    attempt({"ip", "netns", "del", ns}, [&] { return !fs::exists(fs::path(kNetnsRun) / ns); });
  if (link_exists(plan.bridge())) {
    if (const std::string a = alias_of(plan.bridge()); a != bridge_alias(state_dir))
      left.push_back("left " + plan.bridge() + " alone: it is not this cluster's ('" + a + "')");
    else
      attempt({"ip", "link", "del", "dev", plan.bridge()},
              [&] { return !link_exists(plan.bridge()); });
  }
  for (const auto& dir : entries_with_prefix(kNetnsEtc, "drv-" + plan.tag + "-")) {
    std::error_code ec;
    fs::remove_all(fs::path(kNetnsEtc) / dir, ec);
    if (ec)
      left.push_back("cannot remove " + (fs::path(kNetnsEtc) / dir).string() + ": " + ec.message());
  }
  std::error_code ec;
  if (fs::is_empty(kNetnsEtc, ec) && !ec) fs::remove(kNetnsEtc, ec);  // made by setup
  close_firewall(plan);
  return left;
}

Entry entry_for(const Plan& plan, const std::string& node) {
  return {std::string(kNetnsRun) + "/" + plan.ns(node), plan.hosts_file(node),
          plan.resolv_file(node), node};
}

bool enter(const Entry& e) {
  auto fail = [&](const char* what) {
    std::fprintf(stderr, "drover: entering %s: %s: %s\n", e.ns_path.c_str(), what,
                 std::strerror(errno));
    return false;
  };
  const int fd = ::open(e.ns_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fail("open");
  if (::unshare(CLONE_NEWNS | CLONE_NEWUTS) != 0) return fail("unshare");
  // Mounts made here stay here (the host's root is usually shared).
  if (::mount("none", "/", nullptr, MS_REC | MS_SLAVE, nullptr) != 0)
    return fail("mount --make-rslave /");
  if (::setns(fd, CLONE_NEWNET) != 0) return fail("setns");
  ::close(fd);
  if (::mount(e.hosts_file.c_str(), "/etc/hosts", nullptr, MS_BIND, nullptr) != 0)
    return fail("bind-mount the hosts file over /etc/hosts");
  // A host without /etc/resolv.conf (or with a dangling link) has no name servers anyway.
  if (::access("/etc/resolv.conf", F_OK) == 0 &&
      ::mount(e.resolv_file.c_str(), "/etc/resolv.conf", nullptr, MS_BIND, nullptr) != 0)
    return fail("bind-mount resolv.conf over /etc/resolv.conf");
  if (::sethostname(e.hostname.c_str(), e.hostname.size()) != 0) return fail("sethostname");
  return true;
}

}  // namespace drover::tool::netns
