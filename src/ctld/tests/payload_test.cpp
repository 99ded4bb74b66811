// The script and submitted environment stay out of the controller's memory: submission
// hands them to the journal, launch messages name them, and the server completes those.
#include "ctld/payload.hpp"

#include <gtest/gtest.h>

#include "ctld/tests/harness.hpp"

using namespace drover;
using namespace drover::ctld;
using namespace drover::ctld::testing;

TEST(Payload, SubmissionMovesScriptAndEnvironmentOut) {
  Harness h;
  Effects fx;
  json s = h.spec(1, 1);
  s["environment"] = {{"PATH", "/usr/bin"}, {"SLURM_JOB_ID", "stale"}};
  const uint64_t id = h.submit(h.alice, s, fx);
  const auto payloads = fx.writes<journal::Payload>();
  ASSERT_EQ(payloads.size(), 1u);
  EXPECT_EQ(payloads[0].id, id);
  EXPECT_EQ(payloads[0].payload["script"], "#!/bin/sh\ntrue\n");
  const core::Job* job = h.sm.find_job(id);
  EXPECT_TRUE(job->spec.script.empty());
  EXPECT_TRUE(job->spec.environment.empty());
  EXPECT_EQ(job->payload_id, id);

  h.sm.schedule(h.now, fx);
  ASSERT_EQ(h.launches(fx).size(), 1u);
  proto::Launch launch;
  for (const auto& o : fx.orders())
    if (const auto* l = std::get_if<proto::Launch>(&o.msg)) launch = *l;
  EXPECT_EQ(launch.payload_id, id);
  complete_launch(launch, payloads[0].payload);
  EXPECT_EQ(launch.script, "#!/bin/sh\ntrue\n");
  EXPECT_EQ(launch.env["PATH"], "/usr/bin");
  EXPECT_EQ(launch.env["SLURM_JOB_ID"], std::to_string(id));  // the controller's wins
}

TEST(Payload, ArrayTasksShareOneAndThePurgeOfTheLastErasesIt) {
  Config c = two_node_config();
  c.min_job_age_s = 10;
  Harness h(c);
  Effects fx;
  json s = h.spec(1, 1);
  s["array"] = "1-3";
  const uint64_t id = h.submit(h.alice, s, fx);
  h.sm.schedule(h.now, fx);
  std::vector<json> launches = h.launches(fx);
  ASSERT_EQ(launches.size(), 3u);
  for (const auto& l : launches) EXPECT_EQ(l["payload_id"], id);
  // All three end; only after the last is purged does the payload go.
  for (const auto& l : launches) {
    const uint64_t task = l["job_id"];
    h.sm.agent_exited(h.sm.find_job(task)->batch_host,
                      exit_report({{"job_id", task}, {"status", 0}}), h.now, fx);
  }
  h.now += 60;
  for (const char* n : {"node1", "node2"}) h.sm.agent_heartbeat(n, {}, h.now);
  Effects purge;
  h.sm.tick(h.now, purge);
  EXPECT_EQ(purge.writes<journal::JobGone>().size(), 3u);
  EXPECT_EQ(purge.writes<journal::PayloadGone>(), std::vector<journal::PayloadGone>{{id}});
}
