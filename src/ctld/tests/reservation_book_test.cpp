// The controller's reservation book: names, the naming counter, starts seen once.
#include "ctld/reservation_book.hpp"

#include <gtest/gtest.h>

using namespace drover;
using namespace drover::ctld;

namespace {

core::Reservation resv(const std::string& name, int64_t start, int64_t end) {
  core::Reservation r;
  r.name = name;
  r.start = start;
  r.end = end;
  return r;
}

TEST(ReservationBook, PutReplacesByNameAndListsInNameOrder) {
  ReservationBook b;
  b.put(resv("maint", 10, 20));
  b.put(resv("alice_1", 10, 20));
  b.put(resv("maint", 30, 40));
  EXPECT_EQ(b.size(), 2u);
  ASSERT_NE(b.get("maint"), nullptr);
  EXPECT_EQ(b.get("maint")->start, 30);
  EXPECT_EQ(b.get("nope"), nullptr);
  std::vector<std::string> names;
  for (const auto& [name, r] : b) names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{"alice_1", "maint"}));
  b.erase(b.find("maint"));
  EXPECT_FALSE(b.contains("maint"));
}

TEST(ReservationBook, UnnamedOnesAreNamedByTheCounter) {
  ReservationBook b;
  b.set_next_id(0);  // a journal without the counter
  EXPECT_EQ(b.next_id(), 1);
  EXPECT_EQ(b.unused_name("alice"), "alice_1");
  b.put(resv("alice_1", 0, 1));
  b.count_created();
  EXPECT_EQ(b.unused_name("alice"), "alice_2");
  b.put(resv("alice_2", 0, 1));  // an operator took the next name
  EXPECT_EQ(b.unused_name("alice"), "alice_2_");
}

TEST(ReservationBook, AStartIsSeenOnce) {
  ReservationBook b;
  b.put(resv("r", 100, 200));
  EXPECT_FALSE(b.started_since_last_look(50));
  EXPECT_TRUE(b.started_since_last_look(100));
  EXPECT_FALSE(b.started_since_last_look(150));
}

}  // namespace
