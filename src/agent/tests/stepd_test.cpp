// A batch job's supervisor and what the agent says to it: the messages survive the wire (and
// a bad one is refused), the supervisor runs the job and records its exit itself, and a new
// agent finds it by its socket, adopts the job and hears its end, also after the agent that
// started it is gone.
#include "agent/stepd.hpp"

#include <gtest/gtest.h>
#include <pwd.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "agent/exit_store.hpp"
#include "agent/stepd_proto.hpp"
#include "proto/decode.hpp"

using namespace drover::agent;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {
struct TempDir {
  fs::path path = fs::temp_directory_path() / ("drover-stepd-" + std::to_string(::getpid()));
  TempDir() {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

template <class T>
T expect_message(int fd) {
  auto frame = stepd::read_frame(fd, 20s);
  if (!frame) throw std::runtime_error("no message");
  stepd::Message m = stepd::decode(*frame);
  if (!std::holds_alternative<T>(m)) throw std::runtime_error("unexpected message: " + *frame);
  return std::get<T>(m);
}

bool wait_until(const std::function<bool()>& f, std::chrono::milliseconds limit = 10s) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!f()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(20ms);
  }
  return true;
}

// A supervisor in a child process (as droverd --stepd would be), given `script` as its job.
struct Supervised {
  TempDir dir;
  std::string spool = (dir.path / "spool").string();
  fs::path work = dir.path / "work";
  pid_t supervisor = -1;
  int link = -1;
  uint64_t job = 42;

  explicit Supervised(const std::string& script, uint32_t run = 7) {
    fs::create_directories(spool);
    fs::create_directories(work);
    ::setenv("DROVER_PROCTRACK", "pgid", 1);  // no cgroups of the host's in a unit test
    const std::string script_path = (work / "job.sh").string();
    std::ofstream(script_path) << "#!/bin/sh\n" << script << "\n";
    fs::permissions(script_path, fs::perms::owner_all);
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
      throw std::runtime_error("sp");
    const int listening = listen_socket(stepd::socket_path(spool, job));
    supervisor = ::fork();
    if (supervisor == 0) {
      ::close(sv[0]);
      ::_exit(run_supervisor(sv[1], listening, spool));
    }
    ::close(sv[1]);
    ::close(listening);
    link = sv[0];
    stepd::Launch l;
    l.spec.job_id = job;
    l.spec.uid = ::geteuid();
    l.spec.gid = ::getegid();
    if (const passwd* pw = ::getpwuid(::geteuid())) l.spec.user = pw->pw_name;
    l.spec.script_path = script_path;
    l.spec.argv = {script_path};
    l.spec.env = {{"PATH", "/usr/bin:/bin"}};
    l.spec.workdir = work.string();
    l.spec.std_out = (work / "out").string();
    l.spec.std_err = l.spec.std_out;
    l.spec.std_in = "/dev/null";
    l.run = run;
    l.node = "n1";
    stepd::write_frame(link, stepd::encode(l));
  }
  ~Supervised() {
    if (link >= 0) ::close(link);
    if (supervisor > 0) {
      ::kill(supervisor, SIGKILL);
      ::waitpid(supervisor, nullptr, 0);
    }
  }
  int wait_supervisor() {
    int status = 0;
    ::waitpid(supervisor, &status, 0);
    supervisor = -1;
    return status;
  }
  std::map<uint64_t, ExitRecord> exits() const { return ExitStore(spool + "/exits").load(); }
};
}  // namespace

TEST(StepdProtocol, EveryMessageSurvivesTheWire) {
  stepd::Launch l;
  l.spec.job_id = 9;
  l.spec.uid = 1000;
  l.spec.gid = 100;
  l.spec.user = "alice";
  l.spec.script_path = "/spool/job9/slurm_script";
  l.spec.argv = {"/spool/job9/slurm_script", "a b"};
  l.spec.env = {{"A", "1"}, {"B", ""}};
  l.spec.workdir = "/home/alice";
  l.spec.std_out = "/o";
  l.spec.std_err = "/e";
  l.spec.std_in = "/i";
  l.spec.append = true;
  l.run = 3;
  l.mem_mb = 512;
  l.node = "n7";
  auto back = std::get<stepd::Launch>(stepd::decode(stepd::encode(l)));
  EXPECT_EQ(back.spec.job_id, 9u);
  EXPECT_EQ(back.spec.uid, 1000u);
  EXPECT_EQ(back.spec.gid, 100u);
  EXPECT_EQ(back.spec.user, "alice");
  EXPECT_EQ(back.spec.script_path, l.spec.script_path);
  EXPECT_EQ(back.spec.argv, l.spec.argv);
  EXPECT_EQ(back.spec.env, l.spec.env);
  EXPECT_EQ(back.spec.workdir, "/home/alice");
  EXPECT_EQ(back.spec.std_out, "/o");
  EXPECT_EQ(back.spec.std_err, "/e");
  EXPECT_EQ(back.spec.std_in, "/i");
  EXPECT_TRUE(back.spec.append);
  EXPECT_EQ(back.run, 3u);
  EXPECT_EQ(back.mem_mb, 512);
  EXPECT_EQ(back.node, "n7");

  auto sig = std::get<stepd::Signal>(stepd::decode(stepd::encode(stepd::Signal{SIGUSR1, true})));
  EXPECT_EQ(sig.sig, SIGUSR1);
  EXPECT_TRUE(sig.batch_only);
  auto term =
      std::get<stepd::Terminate>(stepd::decode(stepd::encode(stepd::Terminate{5, "CANCELLED"})));
  EXPECT_EQ(term.kill_wait_s, 5);
  EXPECT_EQ(term.notice, "CANCELLED");
  EXPECT_TRUE(std::holds_alternative<stepd::StatusRequest>(
      stepd::decode(stepd::encode(stepd::StatusRequest{}))));
  auto st = std::get<stepd::Status>(stepd::decode(stepd::encode(stepd::Status{9, 2, 1234})));
  EXPECT_EQ(st.job_id, 9u);
  EXPECT_EQ(st.run, 2u);
  EXPECT_EQ(st.pid, 1234);
  EXPECT_EQ(std::get<stepd::Started>(stepd::decode(stepd::encode(stepd::Started{77}))).pid, 77);
  stepd::Exited e{9, {137, 2, {}}};
  e.record.usage.oom_kills = 1;
  e.record.usage.max_rss_bytes = 4096;
  auto eb = std::get<stepd::Exited>(stepd::decode(stepd::encode(e)));
  EXPECT_EQ(eb.job_id, 9u);
  EXPECT_EQ(eb.record.status, 137);
  EXPECT_EQ(eb.record.run, 2u);
  EXPECT_EQ(eb.record.usage.oom_kills, 1);
  EXPECT_EQ(eb.record.usage.max_rss_bytes, 4096);
}

TEST(StepdProtocol, ABadFrameIsRefused) {
  using drover::proto::BadMessage;
  EXPECT_THROW(stepd::decode("not json"), BadMessage);
  EXPECT_THROW(stepd::decode(R"({"type":"reboot"})"), BadMessage);
  EXPECT_THROW(stepd::decode(R"({"type":"signal","signal":-1})"), BadMessage);
  EXPECT_THROW(stepd::decode(R"({"type":"signal","signal":100000})"), BadMessage);
  EXPECT_THROW(stepd::decode(R"({"type":"signal","signal":"TERM"})"), BadMessage);
  EXPECT_THROW(stepd::decode(R"({"type":"terminate","kill_wait":-3})"), BadMessage);
  EXPECT_THROW(stepd::decode(R"({"type":"launch","job_id":1,"uid":0,"gid":0,"run":0})"),
               BadMessage);  // no script
  EXPECT_THROW(stepd::decode(R"({"type":"launch","job_id":1,"uid":0,"gid":0,"run":0,)"
                             R"("script":"/s","env":{"A":1}})"),
               BadMessage);
  EXPECT_THROW(stepd::decode(R"({"type":"launch","job_id":1,"uid":-1,"gid":0,"run":0,)"
                             R"("script":"/s"})"),
               BadMessage);
  EXPECT_THROW(stepd::decode(R"({"type":"status","run":1})"), BadMessage);  // no job id
}

TEST(StepdProtocol, OnlyJobSocketsAreListed) {
  TempDir t;
  for (const char* name : {"job1.sock", "job20.sock", "job.sock", "jobx.sock", "job3.sock.tmp",
                           "other", "job18446744073709551615999.sock"})
    std::ofstream(t.path / name) << "";
  EXPECT_EQ(stepd::listed_jobs(t.path.string()), (std::vector<uint64_t>{1, 20}));
  EXPECT_TRUE(stepd::listed_jobs((t.path / "none").string()).empty());
}

TEST(StepdProtocol, ASocketNobodyListensOnIsRemovedNotAdopted) {
  TempDir t;
  const std::string spool = t.path.string();
  fs::create_directories(stepd::socket_dir(spool));
  const std::string path = stepd::socket_path(spool, 5);
  // Bound and closed: what a supervisor killed with SIGKILL leaves.
  int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strcpy(addr.sun_path, path.c_str());
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ::close(fd);
  ASSERT_TRUE(fs::exists(path));
  EXPECT_FALSE(stepd::adopt(spool, 5, 1s));
  EXPECT_FALSE(fs::exists(path));
  EXPECT_FALSE(stepd::adopt(spool, 6, 1s));  // none at all
}

TEST(Supervisor, RunsTheJobAndRecordsItsExitItself) {
  Supervised s("echo out; echo err >&2; exit 3");
  const auto started = expect_message<stepd::Started>(s.link);
  EXPECT_GT(started.pid, 0);
  const auto exited = expect_message<stepd::Exited>(s.link);
  EXPECT_EQ(exited.job_id, 42u);
  EXPECT_TRUE(WIFEXITED(exited.record.status));
  EXPECT_EQ(WEXITSTATUS(exited.record.status), 3);
  EXPECT_EQ(exited.record.run, 7u);
  EXPECT_EQ(slurp(s.work / "out"), "out\nerr\n");
  // On disk before the supervisor goes, and its socket gone with it.
  auto exits = s.exits();
  ASSERT_EQ(exits.count(42), 1u);
  EXPECT_EQ(exits[42].status, exited.record.status);
  EXPECT_EQ(exits[42].run, 7u);
  EXPECT_FALSE(fs::exists(stepd::socket_path(s.spool, 42)));
  ::close(s.link);
  s.link = -1;
  const int status = s.wait_supervisor();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

TEST(Supervisor, OutlivesItsAgentAndANewAgentAdoptsTheJob) {
  Supervised s("while [ ! -e go ]; do sleep 0.05; done; echo done; exit 5");
  const auto started = expect_message<stepd::Started>(s.link);
  // The agent that started it dies: the job goes on.
  ::close(s.link);
  s.link = -1;
  std::this_thread::sleep_for(200ms);
  EXPECT_EQ(::kill(started.pid, 0), 0);
  EXPECT_TRUE(s.exits().empty());
  // A new agent finds it by its socket and learns what it runs.
  ASSERT_EQ(stepd::listed_jobs(stepd::socket_dir(s.spool)), std::vector<uint64_t>{42});
  auto adopted = stepd::adopt(s.spool, 42, 5s);
  ASSERT_TRUE(adopted);
  EXPECT_EQ(adopted->status.job_id, 42u);
  EXPECT_EQ(adopted->status.run, 7u);
  EXPECT_EQ(adopted->status.pid, started.pid);
  std::ofstream(s.work / "go") << "";
  const auto exited = expect_message<stepd::Exited>(adopted->fd);
  EXPECT_EQ(WEXITSTATUS(exited.record.status), 5);
  EXPECT_EQ(slurp(s.work / "out"), "done\n");
  ::close(adopted->fd);
  s.wait_supervisor();
  EXPECT_EQ(s.exits().at(42).run, 7u);
}

TEST(Supervisor, AnExitWithNoAgentToHearItIsInTheStore) {
  Supervised s("while [ ! -e go ]; do sleep 0.05; done; exit 4");
  expect_message<stepd::Started>(s.link);
  ::close(s.link);
  s.link = -1;
  std::ofstream(s.work / "go") << "";
  const int status = s.wait_supervisor();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  auto exits = s.exits();
  ASSERT_EQ(exits.count(42), 1u);
  EXPECT_EQ(WEXITSTATUS(exits[42].status), 4);
  EXPECT_FALSE(stepd::adopt(s.spool, 42, 1s));  // nobody to adopt: its record is what is left
}

TEST(Supervisor, TerminateSendsTheNoticeSigtermAndThenSigkill) {
  // The shell ignores SIGTERM: only the SIGKILL after kill_wait ends it.
  Supervised s("trap '' TERM; echo ready; while :; do sleep 0.05; done");
  expect_message<stepd::Started>(s.link);
  ASSERT_TRUE(wait_until([&] { return slurp(s.work / "out") == "ready\n"; }));
  const auto t0 = std::chrono::steady_clock::now();
  stepd::write_frame(s.link, stepd::encode(stepd::Terminate{1, "*** JOB 42 CANCELLED ***"}));
  const auto exited = expect_message<stepd::Exited>(s.link);
  EXPECT_GE(std::chrono::steady_clock::now() - t0, 900ms);
  EXPECT_TRUE(WIFSIGNALED(exited.record.status));
  EXPECT_EQ(WTERMSIG(exited.record.status), SIGKILL);
  EXPECT_EQ(slurp(s.work / "out"), "ready\nslurmstepd-n1: error: *** JOB 42 CANCELLED ***\n");
}

TEST(Supervisor, SignalsReachTheShellOrItsWholeGroup) {
  Supervised s("trap 'echo usr1; exit 9' USR1; echo ready; while :; do sleep 0.05; done");
  expect_message<stepd::Started>(s.link);
  ASSERT_TRUE(wait_until([&] { return slurp(s.work / "out") == "ready\n"; }));
  stepd::write_frame(s.link, stepd::encode(stepd::Signal{SIGUSR1, true}));
  const auto exited = expect_message<stepd::Exited>(s.link);
  EXPECT_EQ(WEXITSTATUS(exited.record.status), 9);
  EXPECT_EQ(slurp(s.work / "out"), "ready\nusr1\n");
}

TEST(Supervisor, TerminateAllEndsEveryJobOfTheNode) {
  Supervised s("sleep 60");
  expect_message<stepd::Started>(s.link);
  ::close(s.link);
  s.link = -1;
  EXPECT_EQ(stepd::terminate_all(s.spool, 1, 10s), 0);
  s.wait_supervisor();
  auto exits = s.exits();
  ASSERT_EQ(exits.count(42), 1u);
  EXPECT_TRUE(WIFSIGNALED(exits[42].status));
  EXPECT_EQ(WTERMSIG(exits[42].status), SIGTERM);
}

TEST(Supervisor, WithoutALaunchItStartsNothingAndLeavesNoSocket) {
  TempDir t;
  const std::string spool = t.path.string();
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  const int listening = listen_socket(stepd::socket_path(spool, 3));
  EXPECT_EQ(fs::status(stepd::socket_dir(spool)).permissions(), fs::perms::owner_all);
  EXPECT_EQ(fs::status(stepd::socket_path(spool, 3)).permissions(),
            fs::perms::owner_read | fs::perms::owner_write);
  const pid_t child = ::fork();
  if (child == 0) {
    ::close(sv[0]);
    ::_exit(run_supervisor(sv[1], listening, spool));
  }
  ::close(sv[1]);
  ::close(listening);
  ::close(sv[0]);  // the agent dies before it sends the job
  int status = 0;
  ::waitpid(child, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1) << status;
  EXPECT_FALSE(fs::exists(stepd::socket_path(spool, 3)));
  EXPECT_TRUE(ExitStore(spool + "/exits").load().empty());
}

TEST(StepdProtocol, StepMessagesSurviveTheWire) {
  stepd::StepLaunch l;
  l.job_id = 5;
  l.step_id = 2;
  l.node = "n2";
  l.cred = R"({"job_id":5})";
  l.launch = R"({"type":"launch"})";
  l.peer = "127.0.0.1:4000";
  l.key = std::string("\x00\x01\xfe\xff", 4);
  l.send_dir = 'd';
  l.recv_dir = 'u';
  l.send_seq = 3;
  l.recv_seq = 1;
  auto back = std::get<stepd::StepLaunch>(stepd::decode(stepd::encode(l)));
  EXPECT_EQ(back.job_id, 5u);
  EXPECT_EQ(back.step_id, 2u);
  EXPECT_EQ(back.node, "n2");
  EXPECT_EQ(back.cred, l.cred);
  EXPECT_EQ(back.launch, l.launch);
  EXPECT_EQ(back.peer, l.peer);
  EXPECT_EQ(back.key, l.key);
  EXPECT_EQ(back.send_dir, 'd');
  EXPECT_EQ(back.recv_dir, 'u');
  EXPECT_EQ(back.send_seq, 3u);
  EXPECT_EQ(back.recv_seq, 1u);
  auto sig = std::get<stepd::StepSignal>(
      stepd::decode(stepd::encode(stepd::StepSignal{SIGINT, true, 4, "CANCELLED", true})));
  EXPECT_EQ(sig.sig, SIGINT);
  EXPECT_TRUE(sig.terminate);
  EXPECT_EQ(sig.kill_wait_s, 4);
  EXPECT_EQ(sig.notice, "CANCELLED");
  EXPECT_TRUE(sig.graceful);
  auto st = std::get<stepd::StepStatus>(stepd::decode(stepd::encode(stepd::StepStatus{5, 2})));
  EXPECT_EQ(st.job_id, 5u);
  EXPECT_EQ(st.step_id, 2u);
  auto ex = std::get<stepd::StepExited>(stepd::decode(stepd::encode(stepd::StepExited{5, 2, 9})));
  EXPECT_EQ(ex.status, 9);
  using drover::proto::BadMessage;
  EXPECT_THROW(stepd::decode(R"({"type":"step_launch","job_id":1,"step_id":0,"key":"zz",)"
                             R"("send_dir":"d","recv_dir":"u"})"),
               BadMessage);
  EXPECT_THROW(stepd::decode(R"({"type":"step_launch","job_id":1,"step_id":0,"key":"00",)"
                             R"("send_dir":"dd","recv_dir":"u"})"),
               BadMessage);
  EXPECT_THROW(stepd::decode(R"({"type":"step_exited","step_id":0})"), BadMessage);
}

TEST(StepdProtocol, OnlyStepSocketsAreListedAsSteps) {
  TempDir t;
  for (const char* name : {"step4.0.sock", "step4.12.sock", "step4.sock", "step.1.sock",
                           "stepx.1.sock", "job4.sock", "step4.1.sock.tmp"})
    std::ofstream(t.path / name) << "";
  EXPECT_EQ(stepd::listed_steps(t.path.string()),
            (std::vector<std::pair<uint64_t, uint32_t>>{{4, 0}, {4, 12}}));
  EXPECT_EQ(stepd::listed_jobs(t.path.string()), std::vector<uint64_t>{4});
  EXPECT_EQ(stepd::step_socket_path("/s", 4, 12), "/s/stepd/step4.12.sock");
}
