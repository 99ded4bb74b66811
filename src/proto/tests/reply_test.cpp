#include "proto/reply.hpp"

#include <gtest/gtest.h>

#include "proto/decode.hpp"

using namespace drover;
using nlohmann::json;

namespace {
// Sent as text, decoded where it arrives, as a command reads it.
template <class T>
proto::Outcome<T> wire(const proto::Outcome<T>& o) {
  return proto::decode_reply<T>(proto::decode_object(proto::dump(o.to_json())));
}
template <class T>
std::string bytes_again(const std::string& text) {
  return proto::dump(proto::decode_reply<T>(proto::decode_object(text)).to_json());
}
}  // namespace

// The bytes the controller sent before the structs: a command of this release reads them, and
// the structs write them again unchanged.
TEST(Reply, PreviousFormatIsReadAndWrittenTheSame) {
  const std::string submit[] = {
      R"({"job_id":5,"ok":true})",
      R"({"job_id":5,"ok":true,"retried":true})",
      R"({"cpus":2,"job_id":7,"nodes":"node[1-2]","ok":true,"partition":"debug","start":1700000000,"test_only":true})",
      R"({"bad_partition":"nope","errno":2000,"error":"Invalid partition name specified","ok":false})",
      R"({"detail":"CPU count per node can not be satisfied","errno":2014,"error":"Requested node configuration is not available","ok":false})",
      R"({"detail":"Failed to validate job spec, --gpus < -N","errno":2072,"error":"Invalid generic resource (gres) specification","local":true,"ok":false})",
      R"({"errno":-1,"error":"Invalid job request","ok":false})",
  };
  for (const auto& text : submit) EXPECT_EQ(bytes_again<proto::SubmitReply>(text), text);
  const std::string jobs[] = {
      R"({"errors":[],"matched":1,"ok":true})",
      R"({"errors":[{"errno":2017,"error":"Invalid job id specified","job":"99"},{"errno":2002,"error":"Access/permission denied","job":"4_[1-3]"}],"matched":0,"ok":false})",
      R"({"errors":[],"ok":true})",
      R"({"errors":[{"errno":-1,"error":"Update of this parameter is not supported: Foo=1","job":"3"}],"ok":false})",
      R"({"errno":-1,"error":"Invalid request: field \"jobs\" is not an array","ok":false})",
  };
  for (const auto& text : jobs) EXPECT_EQ(bytes_again<proto::JobsReply>(text), text);
  const std::string acks[] = {
      R"({"ok":true})",
      R"({"errno":2018,"error":"Invalid node name specified","ok":false})",
      R"({"detail":"Node 'd1' already exists in the node table","errno":2018,"error":"Invalid node name specified","ok":false})",
  };
  for (const auto& text : acks) EXPECT_EQ(bytes_again<proto::Ack>(text), text);
  const std::string reservations[] = {
      R"({"name":"resv_1","ok":true})",
      R"({"ok":true})",
      R"({"errno":2082,"error":"Duplicate reservation name","ok":false})",
  };
  for (const auto& text : reservations) EXPECT_EQ(bytes_again<proto::ReservationReply>(text), text);
}

TEST(Reply, TypedFieldsAreRead) {
  auto s = proto::decode_reply<proto::SubmitReply>(proto::decode_object(
      R"({"bad_partition":"nope","errno":2000,"error":"Invalid partition name specified","ok":false})"));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.refusal()->error.code, proto::Errno::kInvalidPartitionName);
  EXPECT_EQ(s.refusal()->bad_partition, "nope");
  s = proto::decode_reply<proto::SubmitReply>(proto::decode_object(R"({"job_id":5,"ok":true})"));
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->job_id, 5u);
  EXPECT_FALSE(s->test_only);
  // Per-job refusals are the reply itself, not a refusal of the request.
  const auto j = proto::decode_reply<proto::JobsReply>(proto::decode_object(
      R"({"errors":[{"errno":2017,"error":"Invalid job id specified","job":"99"}],"matched":0,"ok":false})"));
  ASSERT_TRUE(j.ok());
  EXPECT_FALSE(j->ok());
  ASSERT_EQ(j->errors.size(), 1u);
  EXPECT_EQ(j->errors[0].job, "99");
  EXPECT_EQ(j->errors[0].error.code, proto::Errno::kInvalidJobId);
  EXPECT_EQ(j->matched, 0u);
}

// A controller that sent no error numbers (an older one) is read by its messages.
TEST(Reply, ErrorsWithoutNumbersAreReadByTheirText) {
  const auto s = proto::decode_reply<proto::SubmitReply>(
      proto::decode_object(R"({"error":"Invalid partition name specified","ok":false})"));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.refusal()->error.code, proto::Errno::kInvalidPartitionName);
  const auto j = proto::decode_reply<proto::JobsReply>(proto::decode_object(
      R"({"errors":[{"error":"Job/step already completing or completed","job":"3"}],"ok":false})"));
  ASSERT_EQ(j->errors.size(), 1u);
  EXPECT_EQ(j->errors[0].error.code, proto::Errno::kAlreadyDone);
}

TEST(Reply, EveryReplyRoundTrips) {
  const proto::Outcome<proto::SubmitReply> submits[] = {
      proto::SubmitReply{.job_id = 3},
      proto::SubmitReply{
          .job_id = 4, .test_only = true, .start = 9, .cpus = 2, .nodes = "n1", .partition = "p"},
      proto::ErrorReply{
          .error = proto::Error(proto::Errno::kInvalidGres), .detail = "x", .local = true},
  };
  for (const auto& o : submits) EXPECT_EQ(wire(o).to_json(), o.to_json());
  const proto::Outcome<proto::JobsReply> jobs = proto::JobsReply{
      .errors = {{.job = "1", .error = proto::Error(proto::Errno::kJobPending)}}, .matched = 2};
  EXPECT_EQ(wire(jobs).to_json(), jobs.to_json());
  const proto::Outcome<proto::ReservationReply> resv = proto::ReservationReply{.name = "r"};
  EXPECT_EQ(wire(resv).to_json(), resv.to_json());
}

// A reply whose members have the wrong types is a refusal the command prints, not a crash.
TEST(Reply, MalformedRepliesAreRefusals) {
  const char* bad[] = {R"({"job_id":"5","ok":true})", R"({"ok":true})",
                       R"({"errors":{},"ok":false})", R"({"errors":[1],"ok":false})",
                       R"({"detail":5,"error":"x","ok":false})"};
  for (const char* text : bad) {
    const json j = proto::decode_object(text);
    const auto s = proto::decode_reply<proto::SubmitReply>(j);
    const auto r = proto::decode_reply<proto::JobsReply>(j);
    EXPECT_TRUE(!s.ok() || !r.ok()) << text;
  }
  const auto s = proto::decode_reply<proto::SubmitReply>(json::array());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.refusal()->error.message.rfind("malformed reply", 0), 0u);
}
