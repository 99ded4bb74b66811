#include "proto/error.hpp"

#include <gtest/gtest.h>

using namespace drover;
using nlohmann::json;

TEST(Error, CarriesSlurmsNumberAndWording) {
  const proto::Error e(proto::Errno::kInvalidJobId);
  EXPECT_EQ(e.message, "Invalid job id specified");
  EXPECT_EQ(e.reply(),
            json::parse(R"({"ok":false,"error":"Invalid job id specified","errno":2017})"));
  EXPECT_EQ(static_cast<int>(proto::Errno::kAccessDenied), 2002);
  EXPECT_EQ(proto::errno_text(proto::Errno::kError), "Unspecified error");
  EXPECT_EQ(proto::errno_text(proto::Errno::kJobPending), "Job is pending execution");
}

TEST(Error, AMessageAloneFindsItsNumber) {
  EXPECT_EQ(proto::Error::from_message("Requested nodes are busy").code, proto::Errno::kNodesBusy);
  EXPECT_EQ(proto::Error::from_message("line 3: bad key").code, proto::Errno::kError);
  EXPECT_EQ(proto::errno_for("Invalid node name specified"), proto::Errno::kInvalidNodeName);
}

TEST(Error, ReadFromAReply) {
  EXPECT_FALSE(proto::Error::from_reply(json{{"ok", true}}));
  auto e = proto::Error::from_reply(
      json{{"ok", false}, {"error", "Access/permission denied"}, {"errno", 2002}});
  ASSERT_TRUE(e);
  EXPECT_EQ(e->code, proto::Errno::kAccessDenied);
  // An older controller's reply has the text only.
  e = proto::Error::from_reply(json{{"ok", false}, {"error", "Invalid job id specified"}});
  ASSERT_TRUE(e);
  EXPECT_EQ(e->code, proto::Errno::kInvalidJobId);
  // The number decides, not the text.
  EXPECT_EQ(proto::Error::from_entry(json{{"error", "whatever"}, {"errno", 2021}}).code,
            proto::Errno::kAlreadyDone);
  EXPECT_EQ(proto::Error::from_reply(json::array())->code, proto::Errno::kError);
}

TEST(Error, OneTableForTheRestApiToo) {
  EXPECT_EQ(proto::errno_text(proto::Errno::kRestAuthFail), "Authentication failure");
  EXPECT_EQ(static_cast<int>(proto::Errno::kUrlInvalidPath), 11008);
  // A number drover never answers with reads as SLURM_ERROR's text.
  EXPECT_EQ(proto::errno_text(static_cast<proto::Errno>(12345)), "Unspecified error");
}
