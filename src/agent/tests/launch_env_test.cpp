// What a job's environment says about reaching the controller: the node's own way there, not
// the submitting host's (a batch job exports its submitter's environment, as Slurm's does).
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <string>

#include "agent/launch.hpp"

using namespace drover::agent;
namespace fs = std::filesystem;

namespace {
using Env = std::map<std::string, std::string>;

// What sbatch on a login host or in `drover up`'s shell exports.
Env submitted(const std::string& socket) {
  return {{"PATH", "/usr/bin:/bin"},
          {"DROVER_SOCKET", socket},
          {"DROVER_STATE_DIR", "/home/alice/cluster"},
          {"DROVER_CONTROLLER", "login.example.com:6817"},
          {"DROVER_AUTH_SOCKET", "/run/login/auth.sock"},
          {"SLURM_JOB_ID", "7"}};
}
}  // namespace

TEST(NodeConnection, AnAgentWithAVouchingSocketPointsJobsAtItsOwnWay) {
  Env env = submitted("/tmp/pytest-of-alice/state/ctld.sock");
  set_node_connection(env, {"10.244.1.1:6817", "/run/drover/auth.sock"});
  EXPECT_EQ(env.count("DROVER_SOCKET"), 0u);  // it would win over the two below
  EXPECT_EQ(env["DROVER_CONTROLLER"], "10.244.1.1:6817");
  EXPECT_EQ(env["DROVER_AUTH_SOCKET"], "/run/drover/auth.sock");
  // The rest is the job's own.
  EXPECT_EQ(env["DROVER_STATE_DIR"], "/home/alice/cluster");
  EXPECT_EQ(env["PATH"], "/usr/bin:/bin");
  EXPECT_EQ(env["SLURM_JOB_ID"], "7");

  // A socket that exists here goes too: the node's way is the one the agent itself uses.
  env = submitted(fs::temp_directory_path().string());
  set_node_connection(env, {"ctl.hpc.svc:6817", "/run/drover/auth.sock"});
  EXPECT_EQ(env.count("DROVER_SOCKET"), 0u);
  EXPECT_EQ(env["DROVER_CONTROLLER"], "ctl.hpc.svc:6817");

  // Set even where the submitter had no drover variables (sbatch --export=NONE).
  env = {{"SLURM_JOB_ID", "8"}};
  set_node_connection(env, {"[fd00::1]:6817", "/run/drover/auth.sock"});
  EXPECT_EQ(env, (Env{{"SLURM_JOB_ID", "8"},
                      {"DROVER_CONTROLLER", "[fd00::1]:6817"},
                      {"DROVER_AUTH_SOCKET", "/run/drover/auth.sock"}}));
}

TEST(NodeConnection, WithoutOneOnlyAnotherHostsSocketGoes) {
  // A node sharing the controller's host or file system (drover up): the submitter's socket is
  // this node's too, and stays with everything else.
  const fs::path dir = fs::temp_directory_path() / ("drover-conn-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string here = (dir / "ctld.sock").string();
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  ASSERT_LT(here.size(), sizeof(addr.sun_path));
  here.copy(addr.sun_path, here.size());
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  Env env = submitted(here);
  const Env before = env;
  set_node_connection(env, {"127.0.0.1:6817", ""});
  EXPECT_EQ(env, before);

  // A path that names nothing on this node is the submitting host's: dropped, so that commands
  // in the job fall back on the node's own configuration.
  env = submitted((dir / "elsewhere" / "ctld.sock").string());
  set_node_connection(env, {"127.0.0.1:6817", ""});
  EXPECT_EQ(env.count("DROVER_SOCKET"), 0u);
  EXPECT_EQ(env["DROVER_CONTROLLER"], "login.example.com:6817");
  EXPECT_EQ(env["DROVER_AUTH_SOCKET"], "/run/login/auth.sock");
  env = submitted(here + "/below-a-socket");  // ENOTDIR
  set_node_connection(env, {"127.0.0.1:6817", ""});
  EXPECT_EQ(env.count("DROVER_SOCKET"), 0u);

  ::close(fd);
  fs::remove_all(dir);
}
