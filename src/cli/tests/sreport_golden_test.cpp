// drover's sreport against real Slurm 22.05's (tests/compat/golden/accounting): the jobs the
// capture ran (jobs.txt: their users, accounts, TRES and times, moved into yesterday) go
// through drover's usage sums (core/usage_report.hpp) and drover's sreport, run with each
// capture's arguments at the moment it ran; stdout, stderr and the exit code must be what the
// real sreport printed over slurmdbd's rollups of the same jobs.
#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>

#include "cli/sreport.hpp"
#include "cli/tests/golden.hpp"
#include "core/tests/scoped_tz.hpp"
#include "core/text.hpp"
#include "proto/acct_json.hpp"

using namespace drover;
using namespace drover::cli;
using namespace drover::cli::testing;

namespace {

// slurmdbd's TRES ids as the capture's database numbered them.
const std::map<std::string, std::string> kTresIds = {
    {"1", "cpu"}, {"2", "mem"}, {"4", "node"}, {"5", "billing"}, {"1001", "gres/gpu"}};

std::vector<core::UsageJob> captured_jobs(int64_t& yesterday) {
  std::vector<core::UsageJob> out;
  std::istringstream in(read_file(golden_dir() + "/jobs.txt"));
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("#", 0) == 0) {
      yesterday = std::stoll(line.substr(line.find("yesterday = ") + 12));
      continue;
    }
    std::istringstream w(line);
    std::string id, tres;
    core::UsageJob j;
    w >> id >> j.user >> j.account >> tres >> j.eligible >> j.start >> j.end;
    for (const auto& item : core::split_list(tres, ',')) {
      const auto eq = item.find('=');
      auto name = kTresIds.find(item.substr(0, eq));
      if (name != kTresIds.end()) j.allocated[name->second] = std::stoll(item.substr(eq + 1));
    }
    j.requested = j.allocated;
    out.push_back(std::move(j));
  }
  return out;
}

class SreportGolden : public ::testing::Test {
 protected:
  core::ScopedTz utc_{"UTC"};  // the capture ran with TZ=UTC: its windows are UTC days
};

}  // namespace

TEST_F(SreportGolden, TheCapturedReportsPrintWhatSlurmPrinted) {
  int64_t yesterday = 0;
  const std::vector<core::UsageJob> jobs = captured_jobs(yesterday);
  ASSERT_EQ(jobs.size(), 4u);
  // The cluster as registered: 2 nodes x 2 CPUs x 1000 MB, one GPU each, two days ago.
  const std::vector<core::TresPeriod> cluster = {
      {yesterday - 86400,
       {{"cpu", 4}, {"mem", 2000}, {"node", 2}, {"billing", 4}, {"gres/gpu", 2}}}};
  const json parents = {
      {"root", ""}, {"physics", "root"}, {"theory", "physics"}, {"chem", "root"}, {"idle", "chem"}};
  int compared = 0;
  for (const Capture& c : all_captures()) {
    const std::vector<std::string> words = shell_words(c.cmd);
    if (words.empty() || words[0] != "sreport") continue;
    CommandEnv env;
    env.user = c.user;
    env.call = [&](const json& req) -> json {
      EXPECT_EQ(req["what"], "usage");
      const int64_t start = req["start"], end = req["end"];
      return {{"ok", true},
              {"cluster", "oracle"},
              {"report", core::compute_usage(jobs, cluster, {}, start, end, c.now)},
              {"parents", parents}};
    };
    env.full_name_of = [](const std::string& user) -> std::optional<std::string> {
      if (user == "root") return "root";
      return "";
    };
    const CommandResult got = run_sreport({words.begin() + 1, words.end()}, env, c.now);
    SCOPED_TRACE(c.name + ": $ " + c.cmd);
    EXPECT_EQ(got.out, c.out);
    EXPECT_EQ(got.err, c.err);
    EXPECT_EQ(got.rc, c.rc);
    ++compared;
  }
  EXPECT_GE(compared, 30);
}
