#include "proto/json.hpp"

#include <gtest/gtest.h>

#include "proto/frame.hpp"

using namespace drover;

TEST(ProtoJson, JobRoundTrips) {
  core::Job job;
  job.id = 42;
  job.spec.name = "train";
  job.spec.ntasks = 4;
  job.spec.environment = {{"A", "1"}, {"PATH", "/bin"}};
  job.spec.argv = {"run.sh", "--x"};
  job.state = core::JobState::Timeout;
  job.completing = true;
  job.exit_signal = 15;
  job.alloc = {{"node1", 2, 100, 2}, {"node2", 2, 100, 2}};
  nlohmann::json j = job;
  core::Job back = j.get<core::Job>();
  EXPECT_EQ(back.id, 42u);
  EXPECT_EQ(back.spec.name, "train");
  EXPECT_EQ(back.spec.environment.at("PATH"), "/bin");
  EXPECT_EQ(back.state, core::JobState::Timeout);
  EXPECT_TRUE(back.completing);
  ASSERT_EQ(back.alloc.size(), 2u);
  EXPECT_EQ(back.alloc[1].node, "node2");
  EXPECT_EQ(back.alloc_cpus(), 4);
  EXPECT_EQ(nlohmann::json(back), j);
}

TEST(ProtoJson, MissingFieldsKeepDefaults) {
  core::Job job = nlohmann::json::parse(R"({"id": 7})").get<core::Job>();
  EXPECT_EQ(job.id, 7u);
  EXPECT_EQ(job.state, core::JobState::Pending);
  EXPECT_EQ(job.spec.ntasks, 1);
}

TEST(ProtoFrame, LengthRoundTrips) {
  for (uint32_t n : {0u, 1u, 255u, 256u, 65536u, proto::kMaxFrame}) {
    std::string h = proto::encode_length(n);
    EXPECT_EQ(proto::decode_length(reinterpret_cast<const unsigned char*>(h.data())), n);
  }
}

TEST(ProtoJson, SummaryLeavesOutScriptAndEnvironment) {
  core::Job job;
  job.id = 3;
  job.spec.script = "#!/bin/sh\n";
  job.spec.environment = {{"A", "1"}};
  job.spec.name = "n";
  job.state = core::JobState::Running;
  nlohmann::json full = job, summary;
  core::job_summary_json(summary, job);
  EXPECT_FALSE(summary["spec"].contains("script"));
  EXPECT_FALSE(summary["spec"].contains("environment"));
  full["spec"].erase("script");
  full["spec"].erase("environment");
  EXPECT_EQ(summary, full);
}
