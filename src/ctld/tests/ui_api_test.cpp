#include "ctld/ui_api.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>

#include "ctld/tests/harness.hpp"
#include "ctld/ui_web.hpp"

using namespace drover;
using namespace drover::ctld;
using namespace drover::ctld::testing;

namespace {

UiJobQuery query(std::map<std::string, std::string> params) {
  UiJobQuery q;
  EXPECT_EQ(ui_parse_job_query(params, q), "");
  return q;
}

std::vector<uint64_t> ids(const json& page) {
  std::vector<uint64_t> out;
  for (const auto& j : page["jobs"]) out.push_back(j["job_id"]);
  return out;
}

}  // namespace

TEST(UiApi, PagesFilterAndSortInTheController) {
  Harness h;
  Effects fx;
  std::vector<uint64_t> mine;
  for (int i = 0; i < 5; ++i) {
    json s = h.spec(2);
    s["name"] = "train-" + std::to_string(i);
    mine.push_back(h.submit(h.alice, s, fx));
  }
  const uint64_t bobs = h.submit(h.bob, h.spec(), fx);
  const UiViewer all = ui_viewer(h.sm, h.alice);

  json page = ui_job_page(h.sm, query({}), all, h.now, 7);
  EXPECT_EQ(page["total"], 6);
  EXPECT_EQ(page["version"], 7);
  EXPECT_EQ(ids(page).front(), mine.front());

  page = ui_job_page(h.sm, query({{"user", "bob"}}), all, h.now, 7);
  EXPECT_EQ(ids(page), std::vector<uint64_t>{bobs});

  page = ui_job_page(h.sm, query({{"name", "train-3"}}), all, h.now, 7);
  EXPECT_EQ(ids(page), std::vector<uint64_t>{mine[3]});

  // Descending by id, second page of two.
  page =
      ui_job_page(h.sm, query({{"sort", "id"}, {"order", "desc"}, {"offset", "2"}, {"limit", "2"}}),
                  all, h.now, 7);
  EXPECT_EQ(page["total"], 6);
  EXPECT_EQ(ids(page), (std::vector<uint64_t>{mine[3], mine[2]}));

  page = ui_job_page(h.sm, query({{"sort", "user"}, {"order", "desc"}, {"limit", "1"}}), all, h.now,
                     7);
  EXPECT_EQ(ids(page), std::vector<uint64_t>{bobs});

  page = ui_job_page(h.sm, query({{"state", "running"}}), all, h.now, 7);
  EXPECT_EQ(page["total"], 0);
  page = ui_job_page(h.sm, query({{"state", "PENDING,RUNNING"}}), all, h.now, 7);
  EXPECT_EQ(page["total"], 6);
}

TEST(UiApi, BadQueriesAreRefused) {
  UiJobQuery q;
  EXPECT_EQ(ui_parse_job_query({{"sort", "script"}}, q), "Unknown sort key script");
  EXPECT_NE(ui_parse_job_query({{"offset", "-1"}}, q = {}), "");
  EXPECT_NE(ui_parse_job_query({{"order", "sideways"}}, q = {}), "");
  EXPECT_EQ(ui_parse_job_query({{"limit", "999999"}}, q = {}), "");
  EXPECT_EQ(q.limit, kUiMaxPage);
}

TEST(UiApi, PrivateDataJobsShowsOnlyOwnJobsToUsers) {
  Config c = two_node_config();
  c.conf.options["PrivateData"] = "jobs";
  Harness h(std::move(c));
  Effects fx;
  const uint64_t a = h.submit(h.alice, h.spec(), fx);
  const uint64_t b = h.submit(h.bob, h.spec(), fx);
  const UiViewer alice = ui_viewer(h.sm, h.alice);
  EXPECT_TRUE(alice.private_jobs);
  EXPECT_EQ(ids(ui_job_page(h.sm, query({}), alice, h.now, 0)), std::vector<uint64_t>{a});
  EXPECT_FALSE(ui_job_detail(h.sm, b, alice, h.now).has_value());
  EXPECT_TRUE(ui_job_detail(h.sm, a, alice, h.now).has_value());
  const UiViewer root = ui_viewer(h.sm, h.root);
  EXPECT_EQ(ui_job_page(h.sm, query({}), root, h.now, 0)["total"], 2);
}

TEST(UiApi, JobDetailNeverCarriesScriptOrEnvironment) {
  Harness h;
  Effects fx;
  json s = h.spec();
  s["script"] = "#!/bin/sh\necho TOP-SECRET-SCRIPT\n";
  s["environment"] = {{"API_KEY", "TOP-SECRET-ENV"}};
  const uint64_t id = h.submit(h.alice, s, fx);
  for (const Caller& who : {h.alice, h.bob, h.root}) {
    auto j = ui_job_detail(h.sm, id, ui_viewer(h.sm, who), h.now);
    ASSERT_TRUE(j.has_value());
    const std::string text = j->dump();
    EXPECT_EQ(text.find("TOP-SECRET"), std::string::npos) << text;
    EXPECT_EQ((*j)["may_act"], who.uid == h.alice.uid || who.uid == 0);
  }
}

TEST(UiApi, ReasonsInPlainWords) {
  core::Job j;
  j.state = core::JobState::Pending;
  j.spec.ntasks = 4;
  j.spec.gpus = "a100:2";
  j.reason = "Resources";
  EXPECT_EQ(ui_reason_text(j), "waiting for 2 GPUs of type a100 and 4 CPUs to be free");
  j.reason = "AssocGrpCpuLimit";
  EXPECT_EQ(ui_reason_text(j), "held back by its account's group CPU limit");
  j.reason = "JobHeldUser";
  EXPECT_EQ(ui_reason_text(j), "held by its owner; release it to let it run");
  j.state = core::JobState::Running;
  EXPECT_EQ(ui_reason_text(j), "");
}

TEST(UiApi, ChangeTrackerReportsChangedJobsAndNodes) {
  Harness h;
  Effects fx;
  UiChangeTracker t;
  const uint64_t a = h.submit(h.alice, h.spec(), fx);
  auto c = t.look(h.sm, 1);  // primes
  EXPECT_TRUE(c.jobs.empty());
  EXPECT_FALSE(c.nodes);
  c = t.look(h.sm, 1);
  EXPECT_TRUE(c.jobs.empty());
  h.sm.schedule(h.now, fx);  // the job starts: its state and the node's allocation change
  c = t.look(h.sm, 2);
  ASSERT_EQ(c.jobs.size(), 1u);
  EXPECT_EQ(c.jobs[0].first, a);
  EXPECT_EQ(c.jobs[0].second, h.alice.uid);
  EXPECT_TRUE(c.nodes);
  // Same version: no pass over the jobs.
  const uint64_t b = h.submit(h.bob, h.spec(), fx);
  EXPECT_TRUE(t.look(h.sm, 2).jobs.empty());
  c = t.look(h.sm, 3);
  ASSERT_EQ(c.jobs.size(), 1u);
  EXPECT_EQ(c.jobs[0].first, b);
}

TEST(UiApi, NodesCarryAllocation) {
  Harness h;
  Effects fx;
  h.submit(h.alice, h.spec(2), fx);
  h.sm.schedule(h.now, fx);
  const json n = ui_nodes(h.sm);
  ASSERT_EQ(n["nodes"].size(), 2u);
  int alloc = 0;
  for (const auto& node : n["nodes"]) alloc += node["alloc_cpus"].get<int>();
  EXPECT_EQ(alloc, 2);
  EXPECT_FALSE(n["partitions"].empty());
}

TEST(UiWeb, StaticFilesStayInsideTheRoot) {
  namespace fs = std::filesystem;
  const fs::path root = fs::temp_directory_path() / ("ui-web-test-" + std::to_string(::getpid()));
  fs::create_directories(root / "assets");
  std::ofstream(root / "index.html") << "<html>app</html>";
  std::ofstream(root / "assets" / "app-1.js") << "js";
  std::ofstream(root.parent_path() / "secret.txt") << "secret";
  auto r = ui_static_file(root.string(), "/ui/");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "<html>app</html>");
  r = ui_static_file(root.string(), "/ui/queue");  // the app's route
  EXPECT_EQ(r.body, "<html>app</html>");
  r = ui_static_file(root.string(), "/ui/assets/app-1.js");
  EXPECT_EQ(r.body, "js");
  EXPECT_EQ(r.content_type, "text/javascript; charset=utf-8");
  EXPECT_EQ(ui_static_file(root.string(), "/ui/assets/missing.js").status, 404);
  EXPECT_EQ(ui_static_file(root.string(), "/ui/../secret.txt").status, 404);
  EXPECT_EQ(ui_static_file(root.string(), "/ui/assets/../../secret.txt").status, 404);
  EXPECT_EQ(ui_static_file("", "/ui/").status, 404);
  EXPECT_EQ(ui_find_web_root(root.string(), ""), root.string());
  EXPECT_EQ(ui_find_web_root((root / "assets").string(), ""), "");
  fs::remove_all(root);
}

TEST(UiWeb, EventsGoOnlyToThoseWhoMaySeeThem) {
  struct Capture : net::HttpStream {
    std::string text;
    bool send(std::string t) override {
      text += t;
      return true;
    }
    bool gone = false;
    void close() override { gone = true; }
    bool closed() const override { return gone; }
  };
  UiEventHub hub;
  auto op = std::make_shared<Capture>();
  auto alice = std::make_shared<Capture>();
  hub.add({op, 0, true});
  hub.add({alice, 1000, false});
  hub.publish({{5, 1001}}, 9, false, 1);
  EXPECT_NE(op->text.find("\"ids\":[5]"), std::string::npos) << op->text;
  EXPECT_EQ(alice->text, "");
  hub.publish({{6, 1000}, {7, 1001}}, 10, true, 2);
  EXPECT_NE(alice->text.find("\"ids\":[6]"), std::string::npos) << alice->text;
  EXPECT_NE(alice->text.find("event: nodes"), std::string::npos);
  // A stream whose token has expired is closed and gets nothing more.
  auto expired = std::make_shared<Capture>();
  hub.add({expired, 0, true, 1});
  hub.publish({{8, 0}}, 11, false, 2);
  EXPECT_TRUE(expired->gone);
  EXPECT_EQ(expired->text, "");
  EXPECT_EQ(hub.size(), 2u);
}

// A figure for docs/benchmarks.md, not a check: one page of a 100,000-job queue, sorted by id
// (the map's order) and by priority (a partial sort), and filtered to one user's jobs.
// Run with --gtest_also_run_disabled_tests --gtest_filter=UiApi.DISABLED_*.
TEST(UiApi, DISABLED_PageOfAHundredThousandJobs) {
  Harness h;
  Effects fx;
  json s = h.spec();
  s["hold"] = true;
  for (int i = 0; i < 100000; ++i) {
    Effects one;
    h.sm.submit(proto::SubmitRequest::from_json({{"spec", s}}), i % 10 == 0 ? h.bob : h.alice,
                h.now, one);
  }
  std::printf("jobs: %zu\n", h.sm.job_count());
  const UiViewer v = ui_viewer(h.sm, h.root);
  for (auto params : std::vector<std::map<std::string, std::string>>{
           {{"limit", "100"}},
           {{"sort", "priority"}, {"order", "desc"}, {"limit", "100"}},
           {{"sort", "name"}, {"offset", "50000"}, {"limit", "100"}},
           {{"user", "bob"}, {"limit", "100"}}}) {
    const auto t0 = std::chrono::steady_clock::now();
    const std::clock_t c0 = std::clock();
    const json page = ui_job_page(h.sm, query(params), v, h.now, 0);
    const double cpu_ms = 1000.0 * static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC;
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    std::printf("%s: total %zu, %.1f ms (%.1f ms CPU), %zu bytes\n", json(params).dump().c_str(),
                page["total"].get<size_t>(), ms, cpu_ms, page.dump().size());
  }
  // The event stream's look for changes, once a second while streams are open: a pass over
  // the jobs when one changed.
  UiChangeTracker tracker;
  tracker.look(h.sm, 1);
  const std::clock_t c0 = std::clock();
  for (int i = 2; i < 12; ++i) tracker.look(h.sm, i);
  std::printf("change look over %zu jobs: %.1f ms CPU each\n", h.sm.job_count(),
              100.0 * static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC);
}
