#include "proto/agent_msg.hpp"

#include <gtest/gtest.h>

#include "proto/decode.hpp"

using namespace drover;
using nlohmann::json;

namespace {
// Encoded, sent as text, decoded where it arrives.
proto::ToAgent to_agent_wire(const proto::ToAgent& m) {
  return proto::decode_to_agent(proto::decode_object(proto::dump(proto::to_json(m))));
}
proto::FromAgent from_agent_wire(const proto::FromAgent& m) {
  return proto::decode_from_agent(proto::decode_object(proto::dump(proto::to_json(m))));
}
}  // namespace

TEST(AgentMsg, LaunchRoundTrips) {
  proto::Launch l;
  l.job_id = 42;
  l.run = 3;
  l.uid = 1000;
  l.gid = 100;
  l.user = "alice";
  l.script = "#!/bin/sh\necho hi\n";
  l.payload_id = 7;
  l.argv = {"a", "b"};
  l.env = {{"SLURM_JOB_ID", "42"}};
  l.get_user_env = true;
  l.workdir = "/home/alice";
  l.open_mode = "append";
  l.std_out = "/tmp/o";
  l.std_err = "/tmp/e";
  l.std_in = "/dev/null";
  l.mem_mb = 512;
  l.resent = true;
  const auto back = std::get<proto::Launch>(to_agent_wire(l));
  EXPECT_EQ(back.to_json(), l.to_json());
  EXPECT_EQ(back.env.at("SLURM_JOB_ID"), "42");
  EXPECT_TRUE(back.resent);
}

TEST(AgentMsg, WireFormIsVersionOnes) {
  // What an agent of the previous release reads: the same keys, optional ones left out.
  EXPECT_EQ(proto::to_json(proto::Terminate{5, 30, std::nullopt, std::nullopt}),
            json::parse(R"({"type":"terminate","job_id":5,"kill_wait":30})"));
  EXPECT_EQ(proto::to_json(proto::ExitAck{5, 2}),
            json::parse(R"({"type":"exit_ack","job_id":5,"run":2})"));
  EXPECT_EQ(proto::to_json(proto::JobExited{5, 256, 1, 0, std::nullopt}),
            json::parse(R"({"type":"exited","job_id":5,"status":256,"run":1})"));
  proto::StepSignal s{5, 0, SIGTERM, true, false, 30, "x"};
  EXPECT_FALSE(s.to_json().contains("graceful"));
  s.graceful = true;
  EXPECT_EQ(s.to_json()["graceful"], true);
  EXPECT_EQ(proto::Launch{}.to_json().count("resent"), 0u);
}

TEST(AgentMsg, EveryMessageRoundTrips) {
  const std::vector<proto::ToAgent> down = {
      proto::Hello{"n1", 1},
      proto::Welcome{1, "pub", "mac", 7},
      proto::Refusal{"Invalid node name specified"},
      proto::Terminate{9, 5, "*** JOB 9 CANCELLED ***", "CANCELLED AT now"},
      proto::Signal{9, SIGUSR1, true},
      proto::StepSignal{9, 2, SIGKILL, true, true, 5, "CANCELLED AT now"},
      proto::ExitAck{9, std::nullopt},
  };
  for (const auto& m : down) EXPECT_EQ(proto::to_json(to_agent_wire(m)), proto::to_json(m));
  proto::Register r;
  r.node = "node1";
  r.version = 1;
  r.nonce = "abc";
  r.mac = "def";
  r.cpus = 4;
  r.real_memory = 2048;
  r.launch_addr = "0.0.0.0:6818";
  r.running = {{3, 1}, {4, std::nullopt}};
  r.finished = {{5, 0, 2, 1, 4096}};
  r.instance = "i1";
  r.dynamic = true;
  r.conf = "CPUs=4";
  r.cpu_load = 0.5;
  r.free_mem = 100;
  r.boot_time = 12345;
  const std::vector<proto::FromAgent> up = {
      r,
      proto::Heartbeat{0.25, 77},
      proto::Heartbeat{},
      proto::JobStarted{9, 1234},
      proto::JobExited{9, 9, 1, 2, 1 << 20},
      proto::StepExited{9, 0, 256},
  };
  for (const auto& m : up) EXPECT_EQ(proto::to_json(from_agent_wire(m)), proto::to_json(m));
  const auto back = std::get<proto::Register>(from_agent_wire(r));
  ASSERT_EQ(back.running.size(), 2u);
  EXPECT_EQ(back.running[0].run, 1u);
  EXPECT_FALSE(back.running[1].run);
  EXPECT_EQ(back.finished.at(0).max_rss, 4096);
}

TEST(AgentMsg, OlderAgentsRegistrationIsRead) {
  // Running jobs as bare ids, no version, no shape: as agents before runs and versions sent.
  const auto r = proto::Register::from_json(json::parse(R"({"type":"register","node":"n",
      "nonce":"x","mac":"y","running":[7,8],"finished":[{"job_id":3,"status":0}]})"));
  EXPECT_EQ(r.version, 0);
  ASSERT_EQ(r.running.size(), 2u);
  EXPECT_EQ(r.running[1].job_id, 8u);
  EXPECT_FALSE(r.running[1].run);
  EXPECT_FALSE(r.finished.at(0).run);
  EXPECT_FALSE(r.cpus);
  EXPECT_FALSE(r.cpu_load);
  // A launch without stderr writes it where stdout goes.
  const auto l = proto::Launch::from_json(
      json::parse(R"({"type":"launch","job_id":1,"uid":0,"gid":0,"stdout":"/tmp/x"})"));
  EXPECT_EQ(l.std_err, "/tmp/x");
  EXPECT_EQ(l.workdir, "/");
}

TEST(AgentMsg, WrongOrMissingFieldsAreRefused) {
  auto to_agent = [](const char* text) { return proto::decode_to_agent(json::parse(text)); };
  auto from_agent = [](const char* text) { return proto::decode_from_agent(json::parse(text)); };
  EXPECT_THROW(to_agent(R"({"job_id":1})"), proto::BadMessage);  // no type
  EXPECT_THROW(to_agent(R"({"type":7})"), proto::BadMessage);
  EXPECT_THROW(to_agent(R"({"type":"nonsense"})"), proto::BadMessage);
  // Each way carries only its own messages.
  EXPECT_THROW(to_agent(R"({"type":"heartbeat"})"), proto::BadMessage);
  EXPECT_THROW(from_agent(R"({"type":"terminate","job_id":1})"), proto::BadMessage);
  EXPECT_THROW(to_agent(R"({"type":"terminate"})"), proto::BadMessage);
  EXPECT_THROW(to_agent(R"({"type":"terminate","job_id":"1"})"), proto::BadMessage);
  EXPECT_THROW(to_agent(R"({"type":"terminate","job_id":-1})"), proto::BadMessage);
  EXPECT_THROW(to_agent(R"({"type":"terminate","job_id":1,"notice":5})"), proto::BadMessage);
  EXPECT_THROW(to_agent(R"({"type":"launch","job_id":1,"gid":0})"), proto::BadMessage);
  EXPECT_THROW(to_agent(R"({"type":"launch","job_id":1,"uid":0,"gid":0,"argv":"x"})"),
               proto::BadMessage);
  EXPECT_THROW(to_agent(R"({"type":"launch","job_id":1,"uid":0,"gid":0,"env":{"A":1}})"),
               proto::BadMessage);
  EXPECT_THROW(to_agent(R"({"type":"launch","job_id":1,"uid":4294967296,"gid":0})"),
               proto::BadMessage);
  EXPECT_THROW(to_agent(R"({"type":"step_signal","job_id":1})"), proto::BadMessage);
  EXPECT_THROW(to_agent(R"({"type":"signal","job_id":1,"signal":1e3})"), proto::BadMessage);
  EXPECT_THROW(from_agent(R"({"type":"exited","status":0})"), proto::BadMessage);
  EXPECT_THROW(from_agent(R"({"type":"exited","job_id":1,"run":-1})"), proto::BadMessage);
  EXPECT_THROW(from_agent(R"({"type":"step_exited","job_id":1,"status":0})"), proto::BadMessage);
  EXPECT_THROW(from_agent(R"({"type":"heartbeat","cpu_load":"high"})"), proto::BadMessage);
  EXPECT_THROW(from_agent(R"({"type":"register","running":{}})"), proto::BadMessage);
  EXPECT_THROW(from_agent(R"({"type":"register","running":["7"]})"), proto::BadMessage);
  EXPECT_THROW(from_agent(R"({"type":"register","finished":[1]})"), proto::BadMessage);
  EXPECT_THROW(from_agent(R"({"type":"register","dynamic":"yes"})"), proto::BadMessage);
  EXPECT_THROW(from_agent(R"({"type":"register","version":4294967297})"), proto::BadMessage);
}

TEST(AgentMsg, ConfineRoundTripsAndIsOptional) {
  proto::Launch l;
  l.job_id = 7;
  EXPECT_EQ(l.to_json().count("confine"), 0u);  // an older agent reads the launch as before
  EXPECT_FALSE(std::get<proto::Launch>(to_agent_wire(l)).confine);
  proto::Confine c;
  c.cpus = {0, 3};
  c.mem_hard = 100 << 20;
  c.mem_soft = 90 << 20;
  c.memsw = 150 << 20;
  c.swappiness = 10;
  c.constrain_devices = true;
  c.deny_devices = {"/dev/nvidia1"};
  l.confine = c;
  const auto back = std::get<proto::Launch>(to_agent_wire(l)).confine;
  ASSERT_TRUE(back);
  EXPECT_TRUE(back->cgroup);
  EXPECT_EQ(back->cpus, c.cpus);
  EXPECT_EQ(back->mem_hard, c.mem_hard);
  EXPECT_EQ(back->mem_soft, c.mem_soft);
  EXPECT_EQ(back->memsw, c.memsw);
  EXPECT_EQ(back->swappiness, 10);
  EXPECT_TRUE(back->constrain_devices);
  EXPECT_EQ(back->deny_devices, c.deny_devices);
  proto::Confine none;
  none.cgroup = false;
  const auto pgid = proto::Confine::from_json(none.to_json());
  EXPECT_FALSE(pgid.cgroup);
  EXPECT_EQ(pgid.swappiness, -1);
  EXPECT_THROW(proto::Confine::from_json(json{{"cpus", {-1}}}), proto::BadMessage);
  EXPECT_THROW(proto::Confine::from_json(json::array()), proto::BadMessage);
}
