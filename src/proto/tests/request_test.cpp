#include "proto/request.hpp"

#include <gtest/gtest.h>

#include "proto/decode.hpp"
#include "proto/json.hpp"

using namespace drover;
using nlohmann::json;

namespace {
// Sent as text, decoded where it arrives.
proto::Request wire(const proto::Request& r) {
  return proto::decode_request(proto::decode_object(proto::dump(proto::to_json(r))));
}
proto::Request decode(const std::string& text) {
  return proto::decode_request(proto::decode_object(text));
}
// The message of the error a frame is refused with.
std::string refusal(const std::string& text) {
  try {
    decode(text);
  } catch (const proto::BadMessage& e) {
    return e.what();
  }
  return "";
}

// Whether T can be built from a JSON-like brace list of values: `{{"what", "shares"}}` is a
// JSON object's brace list, `{"shares"}` and `{5u}` are members in order.
template <class T>
concept FromBraceList = requires {
  T{{"what", "shares"}};
}
|| requires { T{"shares"}; }
|| requires { T{5u}; }
|| requires { T{{"1"}, {{"a", "b"}}}; };
template <class T>
concept ByName = requires {
  T{};
};
template <class... T>
constexpr bool none_from_brace_list(std::variant<T...>*) {
  return ((!FromBraceList<T> && ByName<T>)&&...);
}
}  // namespace

// A brace list meant as JSON (`m.query({{"what", "shares"}}, now)`) must not compile as a
// request's members in order; designated initializers do.
static_assert(none_from_brace_list(static_cast<proto::Request*>(nullptr)));
static_assert(requires { proto::QueryRequest{.what = "shares"}; });

TEST(Request, EveryRequestRoundTrips) {
  proto::SubmitRequest submit;
  submit.spec.name = "job";
  submit.spec.ntasks = 4;
  submit.spec.script = "#!/bin/sh\n";
  submit.test_only = false;
  submit.request_id = "abc";
  proto::CancelRequest cancel;
  cancel.jobs = {"36", "37_[1-3]"};
  cancel.steps = {{"38.0", 38, 0}};
  cancel.signal = 15;
  cancel.batch = true;
  cancel.uid = 1000;
  cancel.states = {"PENDING"};
  proto::PartitionUpdateRequest part;
  part.name = "debug";
  part.set.state = "DRAIN";
  part.set.max_time_min = 60;
  part.set.nodes = {"node1"};
  proto::ReservationRequest resv;
  resv.action = "create";
  resv.request.emplace();
  resv.request->name = "r1";
  resv.request->node_cnt = 2;
  proto::QueryRequest query;
  query.what = "jobs";
  query.job_id = 7;
  query.detail = false;
  query.users = {"alice"};
  query.job_ids = std::vector<uint64_t>{1, 2};
  query.uids = std::vector<uint32_t>{1000};
  proto::StepCreateRequest step;
  step.job_id = 5;
  step.ntasks = 2;
  step.distribution = "cyclic";
  step.srun_pid = 1234;
  proto::AcctChangeRequest acct;
  acct.commit = true;
  acct.generation = 3;
  const proto::Request all[] = {
      submit,
      cancel,
      proto::ControlRequest{.action = "hold", .jobs = {"1", "2"}},
      proto::JobUpdateRequest{.jobs = {"1"}, .set = {{"TimeLimit", "10"}}},
      proto::NodeUpdateRequest{.nodes = "node[1-2]", .state = "DRAIN", .reason = "maintenance"},
      proto::NodeCreateRequest{.line = "NodeName=d1 State=FUTURE"},
      proto::NodeDeleteRequest{.nodes = "d1"},
      part,
      resv,
      proto::ReconfigureRequest{},
      proto::TokenRequest{.username = "bob", .lifespan = 3600},
      query,
      step,
      proto::StepCompleteRequest{
          .job_id = 5, .step_id = 0, .exit_code = 1, .exit_signal = 0, .cancelled = false},
      proto::AllocationInfoRequest{.job_id = 5},
      proto::AllocationCompleteRequest{.job_id = 5, .status = 256},
      proto::AcctShowRequest{},
      acct,
  };
  for (const auto& r : all) {
    const proto::Request back = wire(r);
    EXPECT_EQ(back.index(), r.index()) << proto::op_of(r);
    EXPECT_EQ(proto::to_json(back), proto::to_json(r)) << proto::op_of(r);
  }
}

// The bytes the commands sent before the structs: a controller of this release reads them, and
// the structs write them again unchanged.
TEST(Request, PreviousFormatIsReadAndWrittenTheSame) {
  const std::string frames[] = {
      R"({"jobs":["36","36_5"],"op":"cancel","signal":15})",
      R"({"op":"cancel","steps":[{"job_id":4,"ref":"4.1","step_id":1}]})",
      R"({"action":"requeue","jobs":["12"],"op":"control"})",
      R"({"jobs":["12"],"op":"update","set":{"TimeLimit":"5"}})",
      R"({"nodes":"node1","op":"node_update","reason":"x","state":"DRAIN"})",
      R"({"line":"NodeName=d1 CPUs=2","op":"node_create"})",
      R"({"nodes":"d1","op":"node_delete"})",
      R"({"name":"debug","op":"partition_update","set":{"max_nodes":-1,"state":"UP"}})",
      R"({"action":"delete","name":"r1","op":"reservation"})",
      R"({"op":"reconfigure"})",
      R"({"lifespan":2147483646,"op":"token"})",
      R"({"active_only":true,"detail":false,"keys":["id","spec"],"op":"query","users":["a"],"what":"jobs"})",
      R"({"end":100,"op":"query","start":0,"what":"usage"})",
      R"({"all_users":true,"end":9,"job_ids":[3],"op":"query","start":1,"what":"acct_jobs"})",
      R"({"op":"query","what":"ping"})",
      R"({"distribution":"block","exact":false,"job_id":9,"name":"hostname","op":"step_create","overcommit":false,"overlap":false})",
      R"({"cancelled":false,"exit_code":0,"exit_signal":0,"job_id":9,"op":"step_complete","step_id":0})",
      R"({"job_id":9,"op":"allocation_info"})",
      R"({"job_id":9,"op":"allocation_complete","status":0})",
      R"({"op":"acct_show"})",
  };
  for (const auto& f : frames) {
    SCOPED_TRACE(f);
    EXPECT_EQ(proto::dump(proto::to_json(decode(f))), f);
  }
  // A submission carries the whole job spec as the commands write it.
  core::JobSpec spec;
  spec.script = "#!/bin/sh\ntrue\n";
  spec.workdir = "/tmp";
  const json old = {{"op", "submit"}, {"spec", spec}, {"test_only", false}, {"request_id", "r"}};
  EXPECT_EQ(proto::to_json(decode(old.dump())), old);
}

TEST(Request, UnknownOpAndMissingOpAreRefused) {
  EXPECT_NE(refusal(R"({"op":"format_disk"})"), "");
  try {
    decode(R"({"op":"format_disk"})");
  } catch (const proto::BadRequest& e) {
    EXPECT_EQ(e.error.message, "Unknown request");
  }
  EXPECT_NE(refusal(R"({"what":"jobs"})"), "");
  EXPECT_NE(refusal(R"({"op":7})"), "");
}

TEST(Request, JobsNamedByNumberAreReadAsTheirText) {
  const auto r = std::get<proto::CancelRequest>(decode(R"({"op":"cancel","jobs":[36,"37_2"]})"));
  EXPECT_EQ(*r.jobs, (std::vector<std::string>{"36", "37_2"}));
}

TEST(Request, MembersOfTheWrongTypeAreRefused) {
  for (const char* bad : {
           R"({"op":"cancel","jobs":"36"})",
           R"({"op":"cancel","jobs":[-36]})",
           R"({"op":"control","action":"hold","jobs":[{"id":1}]})",
           R"({"op":"cancel","signal":"TERM"})",
           R"({"op":"cancel","uid":-1})",
           R"({"op":"cancel","steps":[{"job_id":"4"}]})",
           R"({"op":"cancel","steps":[1]})",
           R"({"op":"control","action":1,"jobs":[]})",
           R"({"op":"update","jobs":["1"]})",
           R"({"op":"update","jobs":["1"],"set":{"TimeLimit":5}})",
           R"({"op":"node_update","nodes":["n1"]})",
           R"({"op":"partition_update","name":5})",
           R"({"op":"partition_update","name":"p","set":[]})",
           R"({"op":"partition_update","name":"p","set":{"state":1}})",
           R"({"op":"partition_update","name":"p","set":{"nodes":"n1"}})",
           R"({"op":"partition_update","name":"p","set":{"colour":"red"}})",
           R"({"op":"reservation","action":"create","request":{"node_cnt":"x"}})",
           R"({"op":"token","lifespan":"1h"})",
           R"({"op":"query","what":"jobs","job_id":-3})",
           R"({"op":"query","what":"jobs","users":"alice"})",
           R"({"op":"query","what":"acct_jobs","uids":[4294967296]})",
           R"({"op":"query","what":"usage","start":1})",
           R"({"op":"step_create"})",
           R"({"op":"step_create","job_id":1,"ntasks":4294967296})",
           R"({"op":"step_complete","job_id":1})",
           R"({"op":"allocation_info","job_id":"1"})",
           R"({"op":"acct_change","request":[]})",
       }) {
    EXPECT_NE(refusal(bad), "") << bad;
  }
}

TEST(Request, SubmissionsThatCannotBeReadGetTheControllersWording) {
  for (const char* bad : {
           R"({"op":"submit"})",
           R"({"op":"submit","spec":[]})",
           R"({"op":"submit","spec":{"ntasks":"four"}})",
           R"({"op":"submit","spec":{},"request_id":""})",
           R"({"op":"submit","spec":{},"request_id":42})",
       }) {
    SCOPED_TRACE(bad);
    try {
      decode(bad);
      ADD_FAILURE() << "decoded";
    } catch (const proto::BadRequest& e) {
      EXPECT_EQ(e.error.message, "Invalid job request");
    }
  }
  EXPECT_EQ(refusal(R"({"op":"submit","spec":{},"request_id":")" + std::string(129, 'x') + "\"}"),
            "Invalid job request");
}
