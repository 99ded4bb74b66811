// sshare against canned controller replies. Header, widths and messages are real sshare
// 22.05's (tests/compat/oracle); real sshare without slurmdbd has no association rows, so the
// rows follow its man page and print code: indentation by printed parent, blanks for values an
// association does not have, '+' where a value is cut.
#include <gtest/gtest.h>

#include "cli/client.hpp"
#include "cli/report_cmds.hpp"

using namespace drover::cli;

namespace {

const json kTres = {"cpu", "mem", "energy", "node", "billing", "fs/disk", "vmem", "pages"};

json row(int id, const std::string& account, const std::string& user, const std::string& parent,
         json raw_shares, double norm_shares, uint64_t raw_usage, json norm_usage, double eff,
         json fairshare, json level_fs) {
  return {{"id", id},
          {"account", account},
          {"user", user},
          {"parent", parent},
          {"raw_shares", raw_shares},
          {"norm_shares", norm_shares},
          {"raw_usage", raw_usage},
          {"norm_usage", norm_usage},
          {"effective_usage", eff},
          {"fairshare", fairshare},
          {"level_fs", level_fs},
          {"grp_tres_raw", {raw_usage / 60, 0, 0, 0, raw_usage / 60, 0, 0, 0}},
          {"tres_run_mins", {0, 0, 0, 0, 0, 0, 0, 0}}};
}

// root (alice 1 share, bob 1 share under physics; root's own user root)
json tree_reply() {
  return {{"ok", true},
          {"cluster_name", "compat"},
          {"priority_type", "priority/multifactor"},
          {"fair_tree", true},
          {"tres_names", kTres},
          {"rows",
           {row(0, "root", "", "", nullptr, 0.0, 7200, nullptr, 1.0, nullptr, nullptr),
            row(1, "root", "root", "root", 1, 0.5, 0, 0.0, 0.0, 1.0, "inf"),
            row(2, "physics", "", "root", 1, 0.5, 7200, 1.0, 1.0, nullptr, 0.5),
            row(3, "physics", "alice", "physics", 1, 0.5, 7200, 1.0, 1.0, 0.333333, 0.5),
            row(4, "physics", "bob", "physics", "parent", 0.5, 0, 0.0, 0.0, 0.666667, nullptr)}}};
}

struct Fake {
  json reply = tree_reply();
  json last_request;
  bool unreachable = false;
  CommandEnv env() {
    CommandEnv e;
    e.call = [this](const json& req) -> json {
      last_request = req;
      if (unreachable) throw ControllerUnreachable("connect");
      json out = reply;
      json rows = json::array();
      for (const auto& r : reply["rows"]) {
        auto in = [&](const char* key, const std::string& v) {
          if (!req.contains(key)) return true;
          for (const auto& x : req[key])
            if (x == v) return true;
          return false;
        };
        if ((r["user"] == "" || in("users", r["user"])) && in("accounts", r["account"]))
          rows.push_back(r);
      }
      out["rows"] = rows;
      return out;
    };
    e.uid_of = [](const std::string&) { return std::optional<uint32_t>(); };
    e.name_of = [](uint32_t uid) -> std::optional<std::string> {
      if (uid == 1000) return "alice";
      return std::nullopt;
    };
    e.user = "root";
    return e;
  }
  CommandResult run(std::vector<std::string> args) { return run_sshare(args, env()); }
};

const std::string kHeader =
    "Account                    User  RawShares  NormShares    RawUsage  EffectvUsage  FairShare "
    "\n"
    "-------------------- ---------- ---------- ----------- ----------- ------------- ---------- "
    "\n";

// The rows of `sshare -a`.
const std::string kRoot =
    "root                                          0.000000        7200      1.000000            "
    "\n";
const std::string kRootUser =
    " root                      root          1    0.500000           0      0.000000   1.000000 "
    "\n";
const std::string kPhysics =
    " physics                                 1    0.500000        7200      1.000000            "
    "\n";
const std::string kAlice =
    "  physics                 alice          1    0.500000        7200      1.000000   0.333333 "
    "\n";
const std::string kBob =
    "  physics                   bob     parent    0.500000           0      0.000000   0.666667 "
    "\n";

}  // namespace

TEST(SshareCmd, AllUsersTree) {
  Fake f;
  auto r = f.run({"-a"});
  EXPECT_EQ(r.rc, 0);
  EXPECT_EQ(r.out, kHeader + kRoot + kRootUser + kPhysics + kAlice + kBob);
  EXPECT_FALSE(f.last_request.contains("users"));
}

TEST(SshareCmd, DefaultIsTheCallersAssociations) {
  Fake f;
  auto r = f.run({});
  EXPECT_EQ(f.last_request["users"], json::array({"root"}));
  EXPECT_EQ(r.out, kHeader + kRoot + kRootUser + kPhysics);
  // -u names (a uid is turned into its name); -u -1 means everyone.
  f.run({"-u", "1000,bob"});
  EXPECT_EQ(f.last_request["users"], json::array({"alice", "bob"}));
  f.run({"-u", "bob", "-u", "-1"});
  EXPECT_FALSE(f.last_request.contains("users"));
  r = f.run({"-u", "4242"});
  EXPECT_EQ(r.err, "Invalid user id: 4242\n");
  EXPECT_EQ(r.rc, 1);
}

TEST(SshareCmd, AccountsAndUsersOnlyRestartTheIndentation) {
  Fake f;
  auto r = f.run({"-a", "-A", "physics"});
  EXPECT_EQ(f.last_request["accounts"], json::array({"physics"}));
  // physics' parent is not printed: physics starts at the left, its users one in.
  EXPECT_EQ(r.out,
            kHeader +
                "physics                                  1    0.500000        7200      1.000000  "
                "          \n"
                " physics                  alice          1    0.500000        7200      1.000000  "
                " 0.333333 \n"
                " physics                    bob     parent    0.500000           0      0.000000  "
                " 0.666667 \n");
  // Users only: no account rows, so no indentation at all.
  r = f.run({"-a", "-U"});
  EXPECT_EQ(r.out,
            kHeader +
                "root                       root          1    0.500000           0      0.000000  "
                " 1.000000 \n"
                "physics                   alice          1    0.500000        7200      1.000000  "
                " 0.333333 \n"
                "physics                     bob     parent    0.500000           0      0.000000  "
                " 0.666667 \n");
}

TEST(SshareCmd, LongShowsNormUsageLevelFsAndTres) {
  Fake f;
  auto r = f.run({"-a", "-l", "-u", "alice"});
  EXPECT_EQ(r.out,
            "Account                    User  RawShares  NormShares    RawUsage   NormUsage  "
            "EffectvUsage  FairShare    LevelFS                    GrpTRESMins                    "
            "TRESRunMins \n"
            "-------------------- ---------- ---------- ----------- ----------- ----------- "
            "------------- ---------- ---------- ------------------------------ "
            "------------------------------ \n"
            "root                                          0.000000        7200                  "
            "1.000000                                                      "
            "cpu=0,mem=0,energy=0,node=0,b+ \n"
            " physics                                 1    0.500000        7200    1.000000      "
            "1.000000              0.500000                                cpu=0,mem=0,energy=0,"
            "node=0,b+ \n"
            "  physics                 alice          1    0.500000        7200    1.000000      "
            "1.000000   0.333333   0.500000                                cpu=0,mem=0,energy=0,"
            "node=0,b+ \n");
  // Level FS of an association without usage is infinite.
  r = f.run({"-a", "-o", "User,LevelFS", "-n"});
  EXPECT_EQ(r.out,
            "                      \n"
            "      root        inf \n"
            "             0.500000 \n"
            "     alice   0.500000 \n"
            "       bob            \n");
}

TEST(SshareCmd, ParsableAndFormat) {
  Fake f;
  EXPECT_EQ(f.run({"-a", "-P"}).out,
            "Account|User|RawShares|NormShares|RawUsage|EffectvUsage|FairShare\n"
            "root|||0.000000|7200|1.000000|\n"
            " root|root|1|0.500000|0|0.000000|1.000000\n"
            " physics||1|0.500000|7200|1.000000|\n"
            "  physics|alice|1|0.500000|7200|1.000000|0.333333\n"
            "  physics|bob|parent|0.500000|0|0.000000|0.666667\n");
  EXPECT_EQ(
      f.run({"-a", "-p", "-n", "-u", "bob", "-o", "acc,User,GrpTRESRaw,id,clu"}).out,
      "root||cpu=120,mem=0,energy=0,node=0,billing=120,fs/disk=0,vmem=0,pages=0|1|compat|\n"
      " physics||cpu=120,mem=0,energy=0,node=0,billing=120,fs/disk=0,vmem=0,pages=0|3|compat|\n"
      "  physics|bob|cpu=0,mem=0,energy=0,node=0,billing=0,fs/disk=0,vmem=0,pages=0|5|compat|\n");
  // Widths: positive right-justifies, negative left-justifies; repeated names count once.
  EXPECT_EQ(f.run({"-o", "Account%-30,User%5,account%-30", "-a", "-u", "alice"}).out,
            "Account                         User \n"
            "------------------------------ ----- \n"
            "root                                 \n"
            " physics                             \n"
            "  physics                      alice \n");
  auto r = f.run({"-o", "bogus"});
  EXPECT_EQ(r.err, "sshare: error: Invalid field requested: \"bogus\"\n");
  EXPECT_EQ(r.rc, 1);
  // Several -o add up.
  EXPECT_EQ(f.run({"-o", "a", "-o", "u", "-n", "-P", "-a", "-U", "-u", "alice"}).out,
            "physics|alice\n");
}

TEST(SshareCmd, ClassicFairShareShowsEveryFactor) {
  Fake f;
  f.reply["fair_tree"] = false;
  f.reply["rows"][2]["fairshare"] = 0.25;
  auto r = f.run({"-l", "-A", "physics", "-u", "nobody"});
  EXPECT_EQ(
      r.out,
      "Account                    User  RawShares  NormShares    RawUsage   NormUsage  "
      "EffectvUsage  FairShare                    GrpTRESMins                    TRESRunMins "
      "\n"
      "-------------------- ---------- ---------- ----------- ----------- ----------- "
      "------------- ---------- ------------------------------ ------------------------------ "
      "\n"
      "physics                                  1    0.500000        7200    1.000000     "
      " 1.000000   0.250000                                cpu=0,mem=0,energy=0,node=0,b+ \n");
}

TEST(SshareCmd, HelpAndErrors) {
  Fake f;
  auto r = f.run({"--help"});
  EXPECT_EQ(r.out.substr(0, r.out.find('\n')),
            "Usage:  sshare [OPTION]                                                    ");
  EXPECT_EQ(f.run({"--usage"}).out, r.out);
  EXPECT_EQ(f.run({"-e"}).out,
            "Account           Cluster           EffectvUsage      FairShare        \n"
            "GrpTRESMins       GrpTRESRaw        ID                LevelFS          \n"
            "NormShares        NormUsage         Partition         RawShares        \n"
            "RawUsage          TRESRunMins       User             \n");
  r = f.run({"-Z"});
  EXPECT_EQ(r.err, "sshare: invalid option -- 'Z'\nTry \"sshare --help\" for more information\n");
  EXPECT_EQ(r.rc, 1);
  r = f.run({"-A"});
  EXPECT_EQ(r.err,
            "sshare: option requires an argument -- 'A'\nTry \"sshare --help\" for more "
            "information\n");
  r = f.run({"-q"});
  EXPECT_EQ(r.err, "getopt error, returned q\n");
  EXPECT_EQ(r.rc, 1);
  f.unreachable = true;
  r = f.run({});
  EXPECT_EQ(r.err,
            "Couldn't get shares from controller: Unable to contact slurm controller (connect "
            "failure)\n");
  EXPECT_EQ(r.rc, 255);
}

TEST(SshareCmd, NoAssociations) {
  // priority/basic (or Slurm without slurmdbd): the header alone.
  Fake f;
  f.reply["rows"] = json::array();
  EXPECT_EQ(f.run({}).out, kHeader);
  EXPECT_EQ(f.run({"-l", "-P"}).out,
            "Account|User|RawShares|NormShares|RawUsage|NormUsage|EffectvUsage|FairShare|LevelFS|"
            "GrpTRESMins|TRESRunMins\n");
  EXPECT_EQ(f.run({"-n"}).out, "");
  EXPECT_EQ(f.run({"-o", "Account,User%20,FairShare"}).out,
            "Account                              User  FairShare \n"
            "-------------------- -------------------- ---------- \n");
}
