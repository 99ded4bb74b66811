// A batch's effects: journal writes once per record, the last content winning, a record's
// removal dropping its earlier write; accounting records once per job; orders kept typed.
#include "ctld/effects.hpp"

#include <gtest/gtest.h>

using namespace drover;
using namespace drover::ctld;

namespace {

TEST(Effects, ARecordIsWrittenOnceWhereItWasFirstWritten) {
  Effects fx;
  fx.journal(journal::Job{7});
  fx.journal(journal::Node{"n1"});
  fx.journal(journal::Job{7});
  fx.journal(journal::Job{8});
  ASSERT_EQ(fx.journal_writes().size(), 3u);
  EXPECT_EQ(fx.journal_writes()[0], JournalWrite(journal::Job{7}));
  EXPECT_EQ(fx.journal_writes()[1], JournalWrite(journal::Node{"n1"}));
  EXPECT_EQ(fx.journal_writes()[2], JournalWrite(journal::Job{8}));
  EXPECT_EQ(fx.writes<journal::Job>().size(), 2u);
  EXPECT_TRUE(fx.any<journal::Node>());
  EXPECT_FALSE(fx.any<journal::NodeGone>());
}

TEST(Effects, TheLastContentOfARecordWins) {
  Effects fx;
  fx.journal(journal::SubmitId{"1000:a", {{"job_id", 1}}});
  fx.journal(journal::SubmitId{"1000:a", {{"job_id", 2}}});
  ASSERT_EQ(fx.writes<journal::SubmitId>().size(), 1u);
  EXPECT_EQ(fx.writes<journal::SubmitId>()[0].record["job_id"], 2);
}

TEST(Effects, ARecordThatGoesDropsItsEarlierWrite) {
  Effects fx;
  fx.journal(journal::Node{"d1"});
  fx.journal(journal::Reservation{"r"});
  fx.journal(journal::NodeGone{"d1"});
  EXPECT_TRUE(fx.writes<journal::Node>().empty());
  EXPECT_TRUE(fx.journals(journal::NodeGone{"d1"}));
  EXPECT_TRUE(fx.journals(journal::Reservation{"r"}));
  // Written again after it went (the same name created again): erased, then written.
  fx.journal(journal::Node{"d1"});
  std::vector<size_t> kinds;
  for (const auto& w : fx.journal_writes()) kinds.push_back(w.index());
  EXPECT_EQ(kinds, (std::vector<size_t>{JournalWrite(std::monostate{}).index(),
                                        JournalWrite(journal::Reservation{}).index(),
                                        JournalWrite(journal::NodeGone{}).index(),
                                        JournalWrite(journal::Node{}).index()}));
}

TEST(Effects, RecordsOfOneKindDoNotClashWithAnother) {
  Effects fx;
  fx.journal(journal::Job{5});
  fx.journal(journal::Payload{5, {{"script", "x"}}});
  fx.journal(journal::PayloadGone{5});
  EXPECT_TRUE(fx.journals(journal::Job{5}));
  EXPECT_TRUE(fx.writes<journal::Payload>().empty());
  fx.journal(journal::Usage{});
  fx.journal(journal::Usage{});
  EXPECT_EQ(fx.writes<journal::Usage>().size(), 1u);
}

TEST(Effects, AJobChangedIsJournaledAndAccountedOnce) {
  Effects fx;
  fx.job_changed(3);
  fx.job_changed(3);
  store::JobRecord run;
  run.job_id = 3;
  run.state = "REQUEUED";
  fx.account(ctld::acct::RequeuedRun{run});
  EXPECT_EQ(fx.writes<journal::Job>().size(), 1u);
  ASSERT_EQ(fx.acct_records().size(), 2u);
  EXPECT_EQ(std::get<ctld::acct::Job>(fx.acct_records()[0]).id, 3u);
  EXPECT_EQ(std::get<ctld::acct::RequeuedRun>(fx.acct_records()[1]).run.state, "REQUEUED");
}

TEST(Effects, OrdersStayTypedAndNoticesAreKept) {
  Effects fx;
  EXPECT_FALSE(fx.reschedule());
  fx.order("n1", proto::Terminate{4, 5, std::nullopt, std::nullopt});
  fx.notify(notice::Reschedule{});
  fx.notify(notice::Warning{"look"});
  fx.notify(notice::Reschedule{});
  ASSERT_EQ(fx.orders().size(), 1u);
  EXPECT_EQ(fx.orders()[0].node, "n1");
  ASSERT_TRUE(std::holds_alternative<proto::Terminate>(fx.orders()[0].msg));
  EXPECT_EQ(std::get<proto::Terminate>(fx.orders()[0].msg).kill_wait, 5);
  EXPECT_TRUE(fx.reschedule());
  ASSERT_EQ(fx.notices().size(), 1u);
  EXPECT_EQ(std::get<notice::Warning>(fx.notices()[0]).text, "look");
}

}  // namespace
