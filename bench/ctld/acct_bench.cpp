// sacctmgr and sreport at scale: how long a change takes in the controller with many
// associations (preview, commit, limits and fair-share tree rebuilt, store write of the rows
// that changed), and how long sreport's sums take over many job records (the store's query and
// the sums). Not a timed test: a program that prints figures (docs/benchmarks.md).
//
//   acct_bench [ACCOUNTS USERS_PER_ACCOUNT JOBS]   (default 1000 10 100000)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "core/acct_admin.hpp"
#include "ctld/acct_record.hpp"
#include "ctld/state_machine.hpp"
#include "ctld/usage.hpp"
#include "proto/acct_json.hpp"
#include "store/accounting.hpp"

using namespace drover;
using Clock = std::chrono::steady_clock;

namespace {

double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

ctld::Config cluster() {
  ctld::Config c;
  c.cluster_name = "bench";
  c.enforce = sched::parse_enforce("associations,limits");
  c.priority.type = sched::PriorityType::Multifactor;
  for (int i = 1; i <= 100; ++i) {
    core::NodeConf n;
    n.name = "node" + std::to_string(i);
    n.cpus = 64;
    n.real_memory_mb = 256000;
    c.conf.nodes.push_back(n);
  }
  core::PartitionConf p;
  p.name = "batch";
  for (const auto& n : c.conf.nodes) p.nodes.push_back(n.name);
  p.is_default = true;
  c.conf.partitions.push_back(p);
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  const int accounts = argc > 1 ? std::atoi(argv[1]) : 1000;
  const int users = argc > 2 ? std::atoi(argv[2]) : 10;
  const int jobs = argc > 3 ? std::atoi(argv[3]) : 100000;
  const auto dir = std::filesystem::temp_directory_path() / "drover-acct-bench";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  auto store = store::open_sqlite_accounting((dir / "accounting.db").string());

  // The data: accounts under root, each with its users.
  core::AcctData d = core::new_acct_data("bench");
  for (int a = 0; a < accounts; ++a) {
    const std::string acct = "acct" + std::to_string(a);
    d.accounts.push_back({acct, acct, acct});
    core::AcctAssoc aa;
    aa.id = d.next_assoc_id++;
    aa.account = acct;
    aa.parent = "root";
    aa.settings.limits.grp_jobs = 100;
    d.assocs.push_back(aa);
    for (int u = 0; u < users; ++u) {
      core::AcctAssoc ua;
      ua.id = d.next_assoc_id++;
      ua.account = acct;
      ua.user = "user" + std::to_string(a * users + u);
      ua.parent = acct;
      d.assocs.push_back(ua);
      core::AcctUser rec;
      rec.name = ua.user;
      rec.default_account = acct;
      d.users.push_back(rec);
    }
  }
  std::sort(d.accounts.begin(), d.accounts.end(), [](auto& x, auto& y) { return x.name < y.name; });
  std::sort(d.users.begin(), d.users.end(), [](auto& x, auto& y) { return x.name < y.name; });

  ctld::StateMachine sm(cluster(), sched::make_scheduler());
  sm.restore(1, {}, 1000);
  auto t = Clock::now();
  store->store_assoc_data({d, ""});
  std::printf("associations: %zu (%d accounts x %d users)\n", d.assocs.size(), accounts, users);
  std::printf("  first store write (every row):      %8.1f ms\n", ms_since(t));
  ctld::Effects fx;
  t = Clock::now();
  sm.install_accounting(d, fx);
  std::printf("  install (limits, fair-share tree):  %8.1f ms\n", ms_since(t));

  // One change, as the controller makes it: preview, commit, store, install.
  core::AcctRequest r;
  r.action = core::AcctRequest::Action::Modify;
  r.entity = core::AcctRequest::Entity::User;
  r.names = {"user42"};
  r.settings = "MaxJobs=4";
  const ctld::Caller root{0, 0, "root", "root"};
  std::optional<core::AcctData> to_store;
  t = Clock::now();
  const auto preview =
      sm.acct_change(proto::AcctChangeRequest{.request = r, .commit = false}, root, to_store);
  const double preview_ms = ms_since(t);
  t = Clock::now();
  sm.acct_change(
      proto::AcctChangeRequest{
          .request = r, .commit = true, .generation = preview["generation"].get<uint64_t>()},
      root, to_store);
  const double commit_ms = ms_since(t);
  t = Clock::now();
  store->store_assoc_data({*to_store, ""});
  const double store_ms = ms_since(t);
  t = Clock::now();
  sm.install_accounting(std::move(*to_store), fx);
  std::printf(
      "  sacctmgr modify user: preview %.1f ms, commit %.1f ms, store %.1f ms, "
      "install %.1f ms\n",
      preview_ms, commit_ms, store_ms, ms_since(t));

  // sreport over a day of job records.
  const int64_t day = 1795478400;
  std::vector<store::JobRecord> records;
  for (int j = 0; j < jobs; ++j) {
    store::JobRecord rec;
    rec.job_id = static_cast<uint64_t>(j + 1);
    rec.user = "user" + std::to_string(j % (accounts * users));
    rec.account = "acct" + std::to_string(j % (accounts * users) / users);
    rec.qos = "normal";
    rec.partition = "batch";
    rec.submit_time = rec.eligible_time = day + j % 86000;
    rec.start_time = rec.eligible_time + 60;
    rec.end_time = rec.start_time + 600 + j % 3000;
    rec.state = "COMPLETED";
    rec.req_cpus = rec.alloc_cpus = 1 + j % 8;
    rec.req_tres = rec.alloc_tres = ctld::acct_tres(rec.alloc_cpus, 1000, 1, 0);
    rec.nnodes = 1;
    records.push_back(std::move(rec));
  }
  for (size_t from = 0; from < records.size(); from += 10000)
    store->upsert(
        {records.begin() + static_cast<std::ptrdiff_t>(from),
         records.begin() + static_cast<std::ptrdiff_t>(std::min(from + 10000, records.size()))});
  store->register_cluster_tres({day - 86400, ctld::cluster_tres(cluster())});
  t = Clock::now();
  store::JobFilter f;
  f.window_start = day;
  f.window_end = day + 86400;
  const auto found = store->query(f);
  const double query_ms = ms_since(t);
  t = Clock::now();
  const auto reply = ctld::usage_reply("bench", found, store->cluster_tres(), {}, *sm.acct_data(),
                                       day, day + 86400, day + 2 * 86400);
  std::printf(
      "sreport over %zu job records of a day: store query %.1f ms, sums %.1f ms (%zu "
      "associations)\n",
      found.size(), query_ms, ms_since(t), reply["report"]["assocs"].size());
  std::filesystem::remove_all(dir);
  return 0;
}
