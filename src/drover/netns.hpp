#pragma once
// `drover up --netns`: every agent of a local cluster in its own network namespace, with its
// own address on a bridge in the host namespace. Built with iproute2's `ip`, run without a
// shell; every step is checked and a failure names the command and its stderr.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace drover::tool::netns {

// What <state dir>/netns records: the tag in every name the cluster owns and its /24.
struct Plan {
  std::string tag;   // 6 hex digits
  uint32_t net = 0;  // the /24's network address, host byte order (10.213.X.0 normally)

  std::string subnet() const;                     // "10.213.7.0/24"
  std::string bridge_ip() const;                  // the subnet's first address, the controller's
  std::string bridge() const;                     // drv-<tag>-br
  std::string ns(const std::string& node) const;  // drv-<tag>-<node>
  std::string hosts_file(const std::string& node) const;   // /etc/netns/<ns>/hosts
  std::string resolv_file(const std::string& node) const;  // /etc/netns/<ns>/resolv.conf
  std::string host_veth(const std::string& ip) const;      // drv<tag>h<last octet>
  bool contains(const std::string& ip) const;  // a node address in the subnet (.2 - .254)
  std::string node_ip(int index) const;        // .index+2: the address slurm.conf starts with
};

// Held while a /24 is chosen and its bridge is set up, so clusters started at once by
// parallel tests never pick the same one.
class Lock {
 public:
  Lock();
  ~Lock();
  Lock(const Lock&) = delete;
  Lock& operator=(const Lock&) = delete;

 private:
  int fd_ = -1;
};

// The plan recorded in the state dir, if the cluster is a netns cluster.
std::optional<Plan> load(const std::filesystem::path& state_dir);
// Picks a tag no interface or namespace uses (from a hash of the state dir) and a /24 of
// 10.213.0.0/16 that no address or route of this host overlaps, and records them. Call
// under a Lock.
Plan create(const std::filesystem::path& state_dir);

struct Node {
  std::string name, ip;
  bool keep = false;  // its agent runs: leave its namespace as it is
};
// Creates (or re-creates, after a crash) the bridge, the namespaces, the veth pairs, the
// /etc/netns files and, where iptables is installed, rules that accept the bridge's traffic.
// `extra_hosts` are "IP name" lines for the hosts files. Throws std::runtime_error naming the
// step that failed.
void setup(const Plan& plan, const std::filesystem::path& state_dir, const std::vector<Node>& nodes,
           const std::vector<std::string>& extra_hosts);
// Removes everything setup creates (whatever of it is there; a bridge of that name only if
// its alias names this state dir); returns what could not be removed, empty when all went.
std::vector<std::string> teardown(const Plan& plan, const std::filesystem::path& state_dir);

// What a forked child needs to enter a node's namespace, prepared before fork.
struct Entry {
  std::string ns_path, hosts_file, resolv_file, hostname;
};
Entry entry_for(const Plan& plan, const std::string& node);
// In a forked child: a mount namespace of its own with the node's hosts and resolv.conf over
// /etc's (as `ip netns exec` mounts them), a UTS namespace named after the node, and the
// node's network namespace. Returns false with a message on stderr when a step fails.
bool enter(const Entry& e);

}  // namespace drover::tool::netns
