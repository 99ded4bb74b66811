// Preemption in the controller: slurm.conf's PreemptType/PreemptMode and partitions'
// PreemptMode/GraceTime, preempted jobs requeued or ended as PREEMPTED, and the preemptor
// starting once they are gone.
#include <gtest/gtest.h>

#include <optional>

#include "ctld/tests/harness.hpp"

using namespace drover;
using namespace drover::ctld;
using namespace drover::ctld::testing;

namespace {

// Two 2-CPU nodes shared by "low" (tier 1, default) and "high" (tier 2).
Config tiered(const std::string& mode, const std::string& low_mode = "",
              const std::string& grace = "") {
  std::string text =
      "ClusterName=test\nKillWait=5\nPreemptType=preempt/partition_prio\nPreemptMode=" + mode +
      "\nNodeName=node[1-2] CPUs=2 RealMemory=1000\n"
      "PartitionName=low Nodes=node[1-2] Default=YES PriorityTier=1" +
      (low_mode.empty() ? "" : " PreemptMode=" + low_mode) +
      (grace.empty() ? "" : " GraceTime=" + grace) +
      "\nPartitionName=high Nodes=node[1-2] PriorityTier=2\n";
  Config c = load_config_text(text, "slurm.conf");
  c.def_mem_per_cpu_mb = 100;
  return c;
}

json job_in(Harness& h, const std::string& part, int tasks, int64_t minutes) {
  json s = h.spec(tasks, 1);
  s["partitions"] = {part};
  s["time_limit_min"] = minutes;
  return s;
}

std::optional<json> terminate_for(const Effects& fx, uint64_t id) {
  for (const auto& [node, msg] : wire(fx))
    if (msg["type"] == "terminate" && msg["job_id"] == id) return msg;
  return std::nullopt;
}

}  // namespace

TEST(Preemption, ConfigIsParsedAndChecked) {
  Config c = tiered("REQUEUE", "CANCEL", "45");
  EXPECT_EQ(c.preemption.type, sched::PreemptionView::Type::PartitionPrio);
  EXPECT_EQ(c.preemption.mode, sched::PreemptMode::Requeue);
  EXPECT_THROW(tiered("SUSPEND,GANG"), core::ParseError);
  EXPECT_THROW(tiered("sideways"), core::ParseError);
  EXPECT_THROW(tiered("CANCEL", "", "-3"), core::ParseError);
  EXPECT_THROW(load_config_text("PreemptType=preempt/magic\nNodeName=n CPUs=1\n", "slurm.conf"),
               core::ParseError);
}

TEST(Preemption, RequeuedThenPreemptorStarts) {
  Harness h(tiered("REQUEUE", "", "45"));
  Effects fx;
  std::vector<uint64_t> low;
  for (int i = 0; i < 2; ++i) low.push_back(h.submit(h.alice, job_in(h, "low", 2, 600), fx));
  h.sm.schedule(h.now, fx);
  for (uint64_t id : low) ASSERT_EQ(h.sm.find_job(id)->state, core::JobState::Running);

  h.now += 10;
  Effects pre;
  const uint64_t high = h.submit(h.bob, job_in(h, "high", 2, 60), pre);
  h.sm.schedule(h.now, pre);
  // One low job makes room (the later one of equal priority: the second).
  const core::Job* victim = h.sm.find_job(low[1]);
  EXPECT_EQ(victim->state, core::JobState::Pending);
  EXPECT_TRUE(victim->completing);
  EXPECT_EQ(victim->restarts, 1u);
  const std::optional<json> msg = terminate_for(pre, low[1]);
  ASSERT_TRUE(msg.has_value());
  EXPECT_EQ((*msg)["kill_wait"], 45);  // GraceTime
  EXPECT_NE((*msg)["notice"].get<std::string>().find("DUE TO PREEMPTION"), std::string::npos);
  EXPECT_EQ(h.sm.find_job(low[0])->state, core::JobState::Running);
  EXPECT_EQ(h.sm.find_job(high)->state, core::JobState::Pending);

  // Its processes end; the high job starts where it was.
  const std::string node = victim->alloc[0].node;
  Effects gone;
  h.sm.agent_exited(node, exit_report({{"job_id", low[1]}, {"status", 15}}), h.now + 1, gone);
  h.sm.schedule(h.now + 1, gone);
  const core::Job* hj = h.sm.find_job(high);
  ASSERT_EQ(hj->state, core::JobState::Running);
  EXPECT_EQ(hj->alloc[0].node, node);
  EXPECT_EQ(h.sm.find_job(low[1])->state, core::JobState::Pending);
}

TEST(Preemption, CancelModeEndsAsPreempted) {
  Harness h(tiered("CANCEL"));
  Effects fx;
  const uint64_t low = h.submit(h.alice, job_in(h, "low", 4, 600), fx);
  h.sm.schedule(h.now, fx);
  ASSERT_EQ(h.sm.find_job(low)->state, core::JobState::Running);
  h.submit(h.bob, job_in(h, "high", 1, 10), fx);
  Effects pre;
  h.sm.schedule(h.now, pre);
  EXPECT_EQ(h.sm.find_job(low)->state, core::JobState::Preempted);
  const std::optional<json> msg = terminate_for(pre, low);
  ASSERT_TRUE(msg.has_value());
  EXPECT_EQ((*msg)["kill_wait"], 5);  // no GraceTime: KillWait
}

TEST(Preemption, PartitionModeOffProtectsItsJobs) {
  Harness h(tiered("CANCEL", "OFF"));
  Effects fx;
  const uint64_t low = h.submit(h.alice, job_in(h, "low", 4, 600), fx);
  h.sm.schedule(h.now, fx);
  const uint64_t high = h.submit(h.bob, job_in(h, "high", 1, 10), fx);
  h.sm.schedule(h.now, fx);
  EXPECT_EQ(h.sm.find_job(low)->state, core::JobState::Running);
  EXPECT_EQ(h.sm.find_job(high)->state, core::JobState::Pending);
}
