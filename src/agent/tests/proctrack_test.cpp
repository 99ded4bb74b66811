#include "agent/proctrack.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

namespace drover::agent {
namespace {
namespace fs = std::filesystem;

struct FakeRoot {
  fs::path dir;
  FakeRoot() {
    dir = fs::temp_directory_path() /
          ("proctrack-" + std::to_string(::getpid()) + "-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~FakeRoot() { fs::remove_all(dir); }
  void file(const std::string& rel, const std::string& text = "") const {
    fs::create_directories((dir / rel).parent_path());
    std::ofstream(dir / rel) << text;
  }
  std::string at(const std::string& rel = "") const {
    return rel.empty() ? dir.string() : (dir / rel).string();
  }
};

TEST(CgroupLayout, PureV2WithMemory) {
  FakeRoot r;
  r.file("cgroup.controllers", "cpuset cpu io memory hugetlb pids rdma misc\n");
  r.file("cgroup.procs");
  CgroupLayout l = detect_cgroups(r.at());
  EXPECT_EQ(l.track, r.at());
  EXPECT_TRUE(l.track_v2);
  EXPECT_EQ(l.memory, r.at());
  EXPECT_TRUE(l.memory_v2);
}

TEST(CgroupLayout, HybridUsesUnifiedToTrackAndV1Memory) {
  // This host's layout: v1 controllers, and a v2 hierarchy without controllers at unified/.
  FakeRoot r;
  r.file("unified/cgroup.controllers", "\n");
  r.file("unified/cgroup.procs");
  r.file("memory/memory.limit_in_bytes", "9223372036854771712\n");
  r.file("memory/cgroup.procs");
  r.file("freezer/cgroup.procs");
  CgroupLayout l = detect_cgroups(r.at());
  EXPECT_EQ(l.track, r.at("unified"));
  EXPECT_TRUE(l.track_v2);
  EXPECT_EQ(l.memory, r.at("memory"));
  EXPECT_FALSE(l.memory_v2);
  EXPECT_NE(l.describe().find("memory limited in cgroup v1"), std::string::npos);
}

TEST(CgroupLayout, CpusetAndDevicesWhereTheHostHasThem) {
  // v2 with cpuset: CPUs confined there; no devices files in v2.
  FakeRoot v2;
  v2.file("cgroup.controllers", "cpuset cpu memory\n");
  v2.file("cgroup.procs");
  CgroupLayout l = detect_cgroups(v2.at());
  EXPECT_EQ(l.cpuset, v2.at());
  EXPECT_TRUE(l.cpuset_v2);
  EXPECT_TRUE(l.devices.empty());
  EXPECT_NE(l.describe().find("ConstrainDevices has no effect"), std::string::npos);
  // This host's hybrid: the v2 tree has no cpuset, so the v1 one; v1 devices.
  FakeRoot hybrid;
  hybrid.file("unified/cgroup.controllers", "\n");
  hybrid.file("unified/cgroup.procs");
  hybrid.file("cpuset/cpuset.cpus", "0-1\n");
  hybrid.file("devices/devices.deny");
  l = detect_cgroups(hybrid.at());
  EXPECT_EQ(l.cpuset, hybrid.at("cpuset"));
  EXPECT_FALSE(l.cpuset_v2);
  EXPECT_EQ(l.devices, hybrid.at("devices"));
  EXPECT_NE(l.describe().find("CPUs confined in cgroup v1"), std::string::npos);
}

TEST(CgroupLayout, PureV1TracksWithTheFreezer) {
  FakeRoot r;
  r.file("memory/memory.limit_in_bytes", "1\n");
  r.file("freezer/cgroup.procs");
  CgroupLayout l = detect_cgroups(r.at());
  EXPECT_EQ(l.track, r.at("freezer"));
  EXPECT_FALSE(l.track_v2);
  EXPECT_EQ(l.memory, r.at("memory"));
}

TEST(CgroupLayout, V2WithoutMemoryControllerLimitsNothing) {
  FakeRoot r;
  r.file("cgroup.controllers", "cpu pids\n");
  CgroupLayout l = detect_cgroups(r.at());
  EXPECT_TRUE(l.track_v2);
  EXPECT_TRUE(l.memory.empty());
  EXPECT_NE(l.describe().find("memory is not limited"), std::string::npos);
}

TEST(CgroupLayout, NothingUnderAnEmptyDirectory) {
  FakeRoot r;
  CgroupLayout l = detect_cgroups(r.at());
  EXPECT_TRUE(l.track.empty());
  EXPECT_TRUE(l.memory.empty());
  EXPECT_EQ(l.describe(), "none");
  EXPECT_TRUE(detect_cgroups(r.at("missing")).track.empty());
}

TEST(CgroupCounter, ReadsMemoryEventsAndOomControl) {
  const std::string events = "low 0\nhigh 0\nmax 12\noom 2\noom_kill 1\noom_group_kill 0\n";
  EXPECT_EQ(cgroup_counter(events, "oom_kill"), 1);
  EXPECT_EQ(cgroup_counter(events, "oom"), 2);
  EXPECT_EQ(cgroup_counter(events, "max"), 12);
  const std::string oom_control = "oom_kill_disable 0\nunder_oom 0\noom_kill 3\n";
  EXPECT_EQ(cgroup_counter(oom_control, "oom_kill"), 3);
  EXPECT_EQ(cgroup_counter("populated 1\nfrozen 0\n", "populated"), 1);
  EXPECT_EQ(cgroup_counter("", "oom_kill"), 0);
  EXPECT_EQ(cgroup_counter("oom_kill_disable 1\n", "oom_kill"), 0);  // a prefix is not the key
}

TEST(NodeCgroupName, NamedAfterTheNodeAndItsSpool) {
  const std::string a = node_cgroup_name("node1", "/var/spool/drover/node1");
  EXPECT_EQ(a.rfind("drover/node1_", 0), 0u) << a;
  EXPECT_EQ(a.size(), std::string("drover/node1_").size() + 8);
  EXPECT_EQ(a, node_cgroup_name("node1", "/var/spool/drover/node1/"));  // stable
  EXPECT_EQ(a, node_cgroup_name("node1", "/var/spool/drover/./node1"));
  // Two local clusters on one host, both with a node1, do not share (or kill) each other's.
  EXPECT_NE(a, node_cgroup_name("node1", "/tmp/other-state/spool/node1"));
  EXPECT_NE(a, node_cgroup_name("node2", "/var/spool/drover/node1"));
}

TEST(ProcTrack, UsageFromV2MemoryFiles) {
  FakeRoot r;
  r.file("cgroup.controllers", "memory pids\n");
  r.file("cgroup.subtree_control");
  r.file("drover/cgroup.subtree_control");
  const std::string name = node_cgroup_name("n1", "/spool/n1");
  r.file(name + "/cgroup.subtree_control");
  r.file(name + "/job_7/memory.events", "low 0\nhigh 0\nmax 40\noom 1\noom_kill 1\n");
  r.file(name + "/job_7/memory.peak", "104857600\n");
  if (::geteuid() != 0) GTEST_SKIP() << "ProcTrack tracks nothing without root";
  ProcTrack t("n1", "/spool/n1", r.at());
  ASSERT_TRUE(t.enabled());
  ASSERT_TRUE(t.limits_memory());
  ProcTrack::Usage u = t.usage(7);
  EXPECT_EQ(u.oom_kills, 1);
  EXPECT_EQ(u.max_rss_bytes, 104857600);
  EXPECT_EQ(t.usage(8).max_rss_bytes, -1);  // nothing known of another job
}

TEST(ProcTrack, UsageFromV1MemoryFiles) {
  FakeRoot r;
  r.file("unified/cgroup.controllers", "\n");
  r.file("memory/memory.limit_in_bytes", "1\n");
  const std::string name = node_cgroup_name("n1", "/spool/n1");
  r.file("memory/" + name + "/job_3/memory.oom_control",
         "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n");
  r.file("memory/" + name + "/job_3/memory.max_usage_in_bytes", "1048576\n");
  if (::geteuid() != 0) GTEST_SKIP() << "ProcTrack tracks nothing without root";
  ProcTrack t("n1", "/spool/n1", r.at());
  ProcTrack::Usage u = t.usage(3);
  EXPECT_EQ(u.oom_kills, 2);
  EXPECT_EQ(u.max_rss_bytes, 1048576);
}

// Against the host's real cgroups: a process that left its session is still found and killed.
void kills_what_left_the_session(const std::string& root) {
  const std::string spool = "/tmp/proctrack-test-" + std::to_string(::getpid());
  ProcTrack t("unit", spool, root);
  if (!t.enabled()) GTEST_SKIP() << "no writable cgroup hierarchy on this host";
  std::vector<int> fds = t.prepare(42, "batch", 64);
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (!place_self(fds)) ::_exit(3);
    // A daemon: a new session in a grandchild, its parent gone.
    if (::fork() == 0) {
      ::setsid();
      (void)!::write(ready[1], "x", 1);
      ::execl("/bin/sleep", "sleep", "300", nullptr);
      ::_exit(4);
    }
    ::_exit(0);
  }
  for (int fd : fds) ::close(fd);
  ::close(ready[1]);
  char c;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  ::close(ready[0]);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_TRUE(t.populated(42));
  EXPECT_TRUE(t.populated(42, "batch"));
  EXPECT_FALSE(t.remove(42));  // not while something runs in it
  t.kill(42);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (t.populated(42) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(t.populated(42));
  EXPECT_TRUE(t.remove(42));
  EXPECT_TRUE(t.kill_leftovers(std::chrono::seconds(1)).empty());
}

TEST(ProcTrack, KillsWhatLeftTheSessionOnThisHost) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to make cgroups";
  kills_what_left_the_session("/sys/fs/cgroup");
}

// A host with cgroup v1 only: tracked in the freezer, killed frozen, one process at a time.
TEST(ProcTrack, KillsWhatLeftTheSessionWithTheV1Freezer) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to make cgroups";
  if (::access("/sys/fs/cgroup/freezer/cgroup.procs", F_OK) != 0)
    GTEST_SKIP() << "no v1 freezer on this host";
  FakeRoot r;  // this host's v1 hierarchies without its v2 one
  fs::create_directory_symlink("/sys/fs/cgroup/freezer", r.dir / "freezer");
  fs::create_directory_symlink("/sys/fs/cgroup/memory", r.dir / "memory");
  ASSERT_FALSE(detect_cgroups(r.at()).track_v2);
  kills_what_left_the_session(r.at());
}

// A restarted agent finds and kills what the previous one left.
TEST(ProcTrack, KillLeftoversOnThisHost) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to make cgroups";
  const std::string spool = "/tmp/proctrack-left-" + std::to_string(::getpid());
  pid_t pid = -1;
  {
    ProcTrack before("unit", spool);
    if (!before.enabled()) GTEST_SKIP() << "no writable cgroup hierarchy on this host";
    std::vector<int> fds = before.prepare(9, "batch", 0);
    int exec_pipe[2];
    ASSERT_EQ(::pipe2(exec_pipe, O_CLOEXEC), 0);
    pid = ::fork();
    if (pid == 0) {
      if (!place_self(fds)) ::_exit(3);
      ::execl("/bin/sleep", "sleep", "300", nullptr);
      ::_exit(4);
    }
    for (int fd : fds) ::close(fd);
    ::close(exec_pipe[1]);
    char c;
    ASSERT_EQ(::read(exec_pipe[0], &c, 1), 0);  // end of file: it has exec'd
    ::close(exec_pipe[0]);
    ASSERT_TRUE(before.populated(9));
  }
  ProcTrack after("unit", spool);
  std::vector<uint64_t> killed = after.kill_leftovers(std::chrono::seconds(10));
  EXPECT_EQ(killed, std::vector<uint64_t>{9});
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;
  EXPECT_FALSE(after.populated(9));
}

// A job whose supervisor a restarted agent adopted keeps its batch step; what srun's tasks of
// the old agent left in it goes, and so does every job no supervisor runs.
TEST(ProcTrack, KillLeftoversKeepsTheBatchStepOfAnAdoptedJob) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to make cgroups";
  const std::string spool = "/tmp/proctrack-keep-" + std::to_string(::getpid());
  ProcTrack t("unit", spool);
  if (!t.enabled()) GTEST_SKIP() << "no writable cgroup hierarchy on this host";
  auto start = [&](uint64_t job, const std::string& step) {
    std::vector<int> fds = t.prepare(job, step, 0);
    int exec_pipe[2];
    EXPECT_EQ(::pipe2(exec_pipe, O_CLOEXEC), 0);
    const pid_t pid = ::fork();
    if (pid == 0) {
      if (!place_self(fds)) ::_exit(3);
      ::execl("/bin/sleep", "sleep", "300", nullptr);
      ::_exit(4);
    }
    for (int fd : fds) ::close(fd);
    ::close(exec_pipe[1]);
    char c;
    EXPECT_EQ(::read(exec_pipe[0], &c, 1), 0);
    ::close(exec_pipe[0]);
    return pid;
  };
  const pid_t batch = start(11, "batch"), step = start(11, "0"), other = start(12, "batch");
  std::vector<uint64_t> killed = t.kill_leftovers(std::chrono::seconds(10), {{11, "batch"}});
  EXPECT_EQ(killed, std::vector<uint64_t>{12});
  for (pid_t pid : {step, other}) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;
  }
  EXPECT_TRUE(t.populated(11, "batch"));
  EXPECT_FALSE(t.populated(11, "0"));
  EXPECT_EQ(::waitpid(batch, nullptr, WNOHANG), 0);  // still running
  t.kill(11);
  int status = 0;
  ASSERT_EQ(::waitpid(batch, &status, 0), batch);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (t.populated(11) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_TRUE(t.remove(11));
}

}  // namespace
}  // namespace drover::agent
