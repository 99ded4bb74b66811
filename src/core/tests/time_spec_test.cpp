#include "core/time_spec.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <optional>
#include <string>

#include "core/error.hpp"
#include "core/tests/scoped_tz.hpp"

using namespace drover::core;

namespace {

// Every expectation below was observed on a real Slurm 22.05 (`sbatch -H -b SPEC --wrap true`,
// then EligibleTime= from `scontrol show job`) on a host in UTC whose clock read
// 2026-11-21T23:41:xx (a Saturday); "past" marks a time not after now, which Slurm shows as
// EligibleTime=Unknown.
class TimeSpec : public ::testing::Test {
 protected:
  ScopedTz utc_{"UTC"};
  static int64_t at(const char* iso) {  // "YYYY-MM-DDTHH:MM:SS" in UTC
    std::tm t{};
    strptime(iso, "%Y-%m-%dT%H:%M:%S", &t);
    return static_cast<int64_t>(timegm(&t));
  }
  static std::string iso(int64_t t) {
    auto tt = static_cast<time_t>(t);
    std::tm tm{};
    gmtime_r(&tt, &tm);
    char buf[32];
    strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
    return buf;
  }
  // The result for SPEC at NOW, or "past" when it is not after NOW.
  static std::string eligible(const char* spec, const char* now = "2026-11-21T23:41:18") {
    int64_t n = at(now);
    int64_t t = parse_time_spec(spec, n);
    return t <= n ? "past" : iso(t);
  }
  static std::string error(const std::string& spec, const char* now = "2026-11-21T23:41:18") {
    try {
      parse_time_spec(spec, at(now));
    } catch (const ParseError& e) {
      return e.what();
    }
    return "accepted";
  }

 private:
};

}  // namespace

TEST_F(TimeSpec, Now) {
  const char* now = "2026-11-21T23:41:03";
  EXPECT_EQ(parse_time_spec("now", at(now)), at(now));
  EXPECT_EQ(parse_time_spec("NOW", at(now)), at(now));
  EXPECT_EQ(eligible("now+5minutes", now), "2026-11-21T23:46:03");
  EXPECT_EQ(eligible("now+5minute", now), "2026-11-21T23:46:03");
  EXPECT_EQ(eligible("now+5", now), "2026-11-21T23:41:08");
  EXPECT_EQ(eligible("now+5second", now), "2026-11-21T23:41:08");
  EXPECT_EQ(eligible("now+5seconds", now), "2026-11-21T23:41:08");
  EXPECT_EQ(eligible("now+1hour", now), "2026-11-22T00:41:03");
  EXPECT_EQ(eligible("now+1hours", now), "2026-11-22T00:41:03");
  EXPECT_EQ(eligible("now+2days", now), "2026-11-23T23:41:03");
  EXPECT_EQ(eligible("now+2day", now), "2026-11-23T23:41:03");
  EXPECT_EQ(eligible("now+1week", now), "2026-11-28T23:41:03");
  EXPECT_EQ(eligible("now+1weeks", now), "2026-11-28T23:41:03");
  EXPECT_EQ(eligible("now + 1hour", now), "2026-11-22T00:41:03");
  EXPECT_EQ(eligible("now+ 1hour", now), "2026-11-22T00:41:03");
  EXPECT_EQ(eligible("now\t+1hour", now), "2026-11-22T00:41:03");
  EXPECT_EQ(eligible("Now+1HOUR", now), "2026-11-22T00:41:03");
  EXPECT_EQ(eligible("now+1HoUrS", now), "2026-11-22T00:41:03");
  EXPECT_EQ(eligible("now+5 minutes", now), "2026-11-21T23:46:03");
  EXPECT_EQ(eligible("now +5minutes", now), "2026-11-21T23:46:03");
  EXPECT_EQ(eligible("now+5minutes ", now), "2026-11-21T23:46:03");
  EXPECT_EQ(eligible("now+5 ", now), "2026-11-21T23:41:08");
  EXPECT_EQ(eligible("now+5 hour", now), "2026-11-22T04:41:03");
  EXPECT_EQ(parse_time_spec("now-1hour", at(now)), at(now) - 3600);
  EXPECT_EQ(parse_time_spec("now+0", at(now)), at(now));
  EXPECT_EQ(eligible("now+99999999999", now), "5195-10-07T09:27:42");
  // Slurm prints garbage years for these; drover saturates instead of overflowing.
  EXPECT_EQ(parse_time_spec("now+99999999999999999999", at(now)), INT64_MAX);
  EXPECT_EQ(parse_time_spec("now+99999999999weeks", at(now)), at(now) + 99999999999 * 604800);
  EXPECT_EQ(parse_time_spec("now-99999999999weeks", at(now)), at(now) - 99999999999 * 604800);
  EXPECT_EQ(parse_time_spec("now-99999999999999999999weeks", at(now)), at(now) - INT64_MAX);
  // Later components override the date or time "now" gave.
  now = "2026-11-21T23:42:40";
  EXPECT_EQ(eligible("now+1day 10:00", now), "2026-11-22T10:00:00");
  EXPECT_EQ(eligible("now+1hour 10:00", now), "2026-11-22T10:00:00");
  EXPECT_EQ(eligible("now+1second 10:00", now), "past");
  EXPECT_EQ(eligible("now+1hour tomorrow", now), "2026-11-22T00:42:40");
  EXPECT_EQ(eligible("now+1hour 12/25", now), "2026-12-25T00:42:40");
  EXPECT_EQ(eligible("now+1hour 12/25/26", now), "2026-12-25T00:42:40");
  EXPECT_EQ(eligible("now+1hour today", now), "past");
  EXPECT_EQ(eligible("now+1hour noon", now), "2026-11-22T12:00:00");
  EXPECT_EQ(eligible("now+1hourT10:00", now), "2026-11-22T10:00:00");
  EXPECT_EQ(eligible("now+1hour-10:00", now), "2026-11-22T10:00:00");
}

TEST_F(TimeSpec, Words) {
  EXPECT_EQ(eligible("tomorrow"), "2026-11-22T00:00:00");
  EXPECT_EQ(eligible("today"), "past");
  EXPECT_EQ(eligible("midnight"), "2026-11-22T00:00:00");
  EXPECT_EQ(eligible("Midnight"), "2026-11-22T00:00:00");
  EXPECT_EQ(eligible("noon"), "2026-11-22T12:00:00");
  EXPECT_EQ(eligible("NOON"), "2026-11-22T12:00:00");
  EXPECT_EQ(eligible("teatime"), "2026-11-22T16:00:00");
  EXPECT_EQ(eligible("fika"), "2026-11-22T15:00:00");
  EXPECT_EQ(eligible("FIKA"), "2026-11-22T15:00:00");
  EXPECT_EQ(eligible("Tnoon"), "2026-11-22T12:00:00");
  EXPECT_EQ(eligible("noon "), "2026-11-22T12:00:00");
  EXPECT_EQ(eligible(" noon"), "2026-11-22T12:00:00");
  EXPECT_EQ(eligible("noon\n"), "2026-11-22T12:00:00");
  EXPECT_EQ(eligible("noon tomorrow"), "2026-11-22T12:00:00");
  EXPECT_EQ(eligible("tomorrow noon"), "2026-11-22T12:00:00");
  EXPECT_EQ(eligible("tomorrownoon"), "2026-11-22T12:00:00");
  EXPECT_EQ(eligible("noon today"), "past");
  EXPECT_EQ(eligible("16:00 tomorrow"), "2026-11-22T16:00:00");
  EXPECT_EQ(eligible("tomorrow 16:00"), "2026-11-22T16:00:00");
  EXPECT_EQ(eligible("tomorrowT16:00"), "2026-11-22T16:00:00");
  EXPECT_EQ(eligible("tomorrow16:00"), "2026-11-22T16:00:00");
  EXPECT_EQ(eligible("tomorrow-10:00"), "2026-11-22T10:00:00");
  EXPECT_EQ(eligible("today16:00"), "past");
  EXPECT_EQ(eligible("noon-"), "2026-11-22T12:00:00");
  EXPECT_EQ(eligible("noon-10:00"), "2026-11-22T10:00:00");
  EXPECT_EQ(eligible("10:00 noon"), "2026-11-22T12:00:00");
  EXPECT_EQ(eligible("noon 10:00"), "2026-11-22T10:00:00");
  EXPECT_EQ(eligible("midnight noon"), "2026-11-22T12:00:00");
  EXPECT_EQ(eligible("tomorrow tomorrow"), "2026-11-22T00:00:00");
  EXPECT_EQ(eligible("today tomorrow"), "2026-11-22T00:00:00");
  EXPECT_EQ(eligible("tomorrow today"), "past");
  EXPECT_EQ(eligible("tomorrow 12/01"), "2026-12-01T00:00:00");
  EXPECT_EQ(eligible("12/01 tomorrow"), "2026-11-22T00:00:00");
}

TEST_F(TimeSpec, TimeOfDay) {
  EXPECT_EQ(eligible("10:00"), "2026-11-22T10:00:00");  // already past today: tomorrow
  EXPECT_EQ(eligible("23:59"), "2026-11-21T23:59:00");
  EXPECT_EQ(eligible("23:41"), "2026-11-22T23:41:00");
  EXPECT_EQ(eligible("23:50"), "2026-11-21T23:50:00");
  EXPECT_EQ(eligible("10:00:30"), "2026-11-22T10:00:30");
  EXPECT_EQ(eligible("9:05"), "2026-11-22T09:05:00");
  EXPECT_EQ(eligible("09:05"), "2026-11-22T09:05:00");
  EXPECT_EQ(eligible("0:00"), "2026-11-22T00:00:00");
  EXPECT_EQ(eligible("-10:00"), "2026-11-22T10:00:00");
  EXPECT_EQ(eligible("10:00 10:00"), "2026-11-22T10:00:00");
  // Exactly now also rolls over.
  EXPECT_EQ(eligible("23:43:05", "2026-11-21T23:43:05"), "2026-11-22T23:43:05");
  EXPECT_EQ(eligible("11/21 23:43:05", "2026-11-21T23:43:05"), "2027-11-21T23:43:05");
  // AM / PM, any case, with or without a blank.
  EXPECT_EQ(eligible("10:00AM"), "2026-11-22T10:00:00");
  EXPECT_EQ(eligible("10:00 AM"), "2026-11-22T10:00:00");
  EXPECT_EQ(eligible("10:00am"), "2026-11-22T10:00:00");
  EXPECT_EQ(eligible("10:00PM"), "2026-11-22T22:00:00");
  EXPECT_EQ(eligible("10:00pm"), "2026-11-22T22:00:00");
  EXPECT_EQ(eligible("10:00 pM"), "2026-11-22T22:00:00");
  EXPECT_EQ(eligible("12:00AM"), "2026-11-22T00:00:00");
  EXPECT_EQ(eligible("12:00PM"), "2026-11-22T12:00:00");
  EXPECT_EQ(eligible("12:30am"), "2026-11-22T00:30:00");
  EXPECT_EQ(eligible("11:59PM"), "2026-11-21T23:59:00");
  EXPECT_EQ(eligible("0:00AM"), "2026-11-22T00:00:00");
  EXPECT_EQ(eligible("10:00:30PM"), "2026-11-22T22:00:30");
  EXPECT_EQ(eligible("10:00:30AM"), "2026-11-22T10:00:30");
  EXPECT_EQ(eligible("10:00:30 PM"), "2026-11-22T22:00:30");
  EXPECT_EQ(eligible("12:00:00am"), "2026-11-22T00:00:00");
}

TEST_F(TimeSpec, Dates) {
  EXPECT_EQ(eligible("2026-12-01"), "2026-12-01T00:00:00");
  EXPECT_EQ(eligible("2026-12-01T10:00"), "2026-12-01T10:00:00");
  EXPECT_EQ(eligible("2026-12-01T10:00:30"), "2026-12-01T10:00:30");
  EXPECT_EQ(eligible("2026-12-01 10:00"), "2026-12-01T10:00:00");
  EXPECT_EQ(eligible("2026-12-01-10:00"), "2026-12-01T10:00:00");
  EXPECT_EQ(eligible("2026-12-01T"), "2026-12-01T00:00:00");
  EXPECT_EQ(eligible("2026-12-01T10:00PM"), "2026-12-01T22:00:00");
  EXPECT_EQ(eligible("2026-12-1"), "2026-12-01T00:00:00");
  EXPECT_EQ(eligible("2026-02-29"), "past");  // 2026-03-01, normalised like mktime
  EXPECT_EQ(eligible("2028-02-29"), "2028-02-29T00:00:00");
  EXPECT_EQ(eligible("2026-11-31"), "2026-12-01T00:00:00");
  EXPECT_EQ(eligible("2025-12-01"), "past");
  EXPECT_EQ(eligible("1969-12-01"), "past");
  EXPECT_EQ(eligible("0000-01-01"), "past");
  EXPECT_EQ(eligible("2038-01-20"), "2038-01-20T00:00:00");
  EXPECT_EQ(eligible("3000-01-01"), "3000-01-01T00:00:00");
  EXPECT_EQ(eligible("9999-12-31"), "9999-12-31T00:00:00");
  EXPECT_EQ(eligible("12/01"), "2026-12-01T00:00:00");
  EXPECT_EQ(eligible("1201"), "2026-12-01T00:00:00");
  EXPECT_EQ(eligible("12/01/26"), "2026-12-01T00:00:00");
  EXPECT_EQ(eligible("120126"), "2026-12-01T00:00:00");
  EXPECT_EQ(eligible("12.01"), "2026-12-01T00:00:00");
  EXPECT_EQ(eligible("12.01.26"), "2026-12-01T00:00:00");
  EXPECT_EQ(eligible("12.01/26"), "2026-12-01T00:00:00");
  EXPECT_EQ(eligible("12.1.26"), "2026-12-01T00:00:00");
  EXPECT_EQ(eligible("12/1"), "2026-12-01T00:00:00");
  EXPECT_EQ(eligible("123"), "2026-12-03T00:00:00");
  EXPECT_EQ(eligible("12/01-10:00"), "2026-12-01T10:00:00");
  EXPECT_EQ(eligible("12/01-10:00:30"), "2026-12-01T10:00:30");
  EXPECT_EQ(eligible("12/01 10:00"), "2026-12-01T10:00:00");
  EXPECT_EQ(eligible("12/01T10:00"), "2026-12-01T10:00:00");
  EXPECT_EQ(eligible("12/01 10:00AM"), "2026-12-01T10:00:00");
  EXPECT_EQ(eligible("10:00 12/01"), "2026-12-01T10:00:00");
  EXPECT_EQ(eligible("12/01-"), "2026-12-01T00:00:00");
  EXPECT_EQ(eligible("12/01T"), "2026-12-01T00:00:00");
  EXPECT_EQ(eligible("12/01/26T10:00"), "2026-12-01T10:00:00");
  EXPECT_EQ(eligible("12/01/26-"), "2026-12-01T00:00:00");
  EXPECT_EQ(eligible("12/01/26-10:00"), "2026-12-01T10:00:00");
  EXPECT_EQ(eligible("12/01/"), "2026-12-01T00:00:00");
  EXPECT_EQ(eligible("12/01/ 10:00"), "2026-12-01T10:00:00");
  EXPECT_EQ(eligible("12/01/T10:00"), "2026-12-01T10:00:00");
  EXPECT_EQ(eligible("12/01.T10:00"), "2026-12-01T10:00:00");
  EXPECT_EQ(eligible("12/01/-"), "2026-12-01T00:00:00");
  EXPECT_EQ(eligible("1201/"), "2026-12-01T00:00:00");
  EXPECT_EQ(eligible("1201/26"), "2026-12-01T00:00:00");
  EXPECT_EQ(eligible("12/0126"), "2026-12-01T00:00:00");
  EXPECT_EQ(eligible("1013"), "2027-10-13T00:00:00");
  EXPECT_EQ(eligible("12/01/00"), "2026-12-01T00:00:00");  // year 00 is no year
  EXPECT_EQ(eligible("11/20/00"), "2027-11-20T00:00:00");
  EXPECT_EQ(eligible("110100"), "2027-11-01T00:00:00");
  EXPECT_EQ(eligible("12/0100fika"), "2026-12-01T15:00:00");
  EXPECT_EQ(eligible("12/01/25 12/01/00"), "past");
  EXPECT_EQ(eligible("0000-12-01"), "past");
  // A year given once stays for later dates without one.
  EXPECT_EQ(eligible("12/01/25 12/05"), "past");
  EXPECT_EQ(eligible("2025-12-01 12/05"), "past");
  EXPECT_EQ(eligible("11/20 2025-12-01"), "past");
  EXPECT_EQ(eligible("12/01/25 noon"), "past");
  EXPECT_EQ(eligible("tomorrow012012026"), "past");
  // "today", "tomorrow" and "now" fix the year too: no rollover.
  EXPECT_EQ(eligible("tomorrow 11/20"), "past");
  EXPECT_EQ(eligible("today 11/20"), "past");
  EXPECT_EQ(eligible("now+1hour 11/20"), "past");
  EXPECT_EQ(eligible("11/20 tomorrow"), "2026-11-22T00:00:00");
  // Without a year, a date that is not after now is next year's.
  EXPECT_EQ(eligible("11/21"), "2027-11-21T00:00:00");
  EXPECT_EQ(eligible("11/20"), "2027-11-20T00:00:00");
  EXPECT_EQ(eligible("1121"), "2027-11-21T00:00:00");
  EXPECT_EQ(eligible("1/12"), "2027-01-12T00:00:00");
  EXPECT_EQ(eligible("1/1"), "2027-01-01T00:00:00");
  EXPECT_EQ(eligible("02/30"), "2027-03-02T00:00:00");
  EXPECT_EQ(eligible("0230"), "2027-03-02T00:00:00");
  EXPECT_EQ(eligible("11/21 23:59"), "2026-11-21T23:59:00");
  EXPECT_EQ(eligible("11/21 10:00"), "2027-11-21T10:00:00");
  EXPECT_EQ(eligible("11/22 10:00"), "2026-11-22T10:00:00");
  // With one, it stays where it is.
  EXPECT_EQ(eligible("11/21/26"), "past");
  EXPECT_EQ(eligible("01/01/01"), "past");
  EXPECT_EQ(eligible("12/01/99"), "2099-12-01T00:00:00");
  EXPECT_EQ(eligible("12/01/69"), "2069-12-01T00:00:00");
  EXPECT_EQ(eligible("12/01/70"), "2070-12-01T00:00:00");
  EXPECT_EQ(eligible("2/29/28"), "2028-02-29T00:00:00");
  EXPECT_EQ(eligible("02/29/28"), "2028-02-29T00:00:00");
  EXPECT_EQ(eligible("02/29/27"), "2027-03-01T00:00:00");
}

// What Slurm 22.05 prints on stderr before "sbatch: error: Invalid --begin specification"
// (exit 255); the same line precedes "No changes specified" from scontrol update StartTime=.
TEST_F(TimeSpec, ErrorsAsSlurmReportsThem) {
  const std::pair<const char*, int> cases[] = {
      {"now+5min", 4},
      {"now+5mins", 4},
      {"now+5m", 4},
      {"now+5s", 4},
      {"now+5sec", 4},
      {"now+5secs", 4},
      {"now+1h", 4},
      {"now+1hr", 4},
      {"now+2d", 4},
      {"now+1w", 4},
      {"now+1wk", 4},
      {"now+1hourx", 9},
      {"now+1hoursx", 10},
      {"now+5 x", 5},
      {"now+5minutesminutes", 12},
      {"now+1hour+1hour", 9},
      {"now+", 3},
      {"now+ ", 3},
      {"now+x", 3},
      {"now+-5", 3},
      {"now16:00", 3},
      {"now 12/01", 4},
      {"now tomorrow", 4},
      {"nowx", 3},
      {"now x", 4},
      {"nown", 3},
      // "now" after something else (Slurm 22.05 reads the rest at twice the offset; these are
      // the cases where that stays inside the text).
      {"16:00now", 13},
      {"noon now", 13},
      {"noon  now", 15},
      {"tomorrow now", 21},
      {"noon nowx", 13},
      {" now+1", 5},
      {"  now+1", 7},
      {"   now+1", 9},
      {"  now+12", 7},
      {"  now+1hour", 7},
      {" now+1hour", 5},
      {"   now+1hour", 9},
      {"noon now+1hour", 13},
      {"noon now+1", 13},
      {"Tnow+1", 5},
      {"Tnow+1hour", 5},
      {"-now+1hour", 5},
      {"noon now+1hourx", 13},
      {"noon now+1 1", 13},
      {"noon now+1x", 13},
      {"noon nowtomorrow", 13},
      {"noon now12", 13},
      {" 10:00now12/01", 15},
      {"-nowtomorrow0230", 5},
      // Words: case-insensitive, but an upper-case 'T' is a separator first.
      {"elevenses", 0},
      {"TOMORROW", 1},
      {"Tomorrow", 1},
      {"Today", 1},
      {"TODAY", 1},
      {"Teatime", 1},
      {"noonx", 4},
      {"x", 0},
      {"noo", 0},
      {"mid", 0},
      {"mi", 0},
      {"midnight+1hour", 8},
      {"tomorrow+1hour", 8},
      {"today+1hour", 5},
      {"16:00+1hour", 5},
      // Clock.
      {"10", 2},
      {"10:", 3},
      {"10:6", 4},
      {"10:60", 3},
      {"24:00", 0},
      {"25:00", 0},
      {"23:60", 3},
      {"10:00:60", 6},
      {"10:00:61", 6},
      {"1:2:3", 3},
      {"13:00PM", 5},
      {"13:00AM", 5},
      {"10AM", 2},
      {"10:00A", 5},
      {"10:00 PMx", 8},
      {"10:00P", 5},
      {"10:00 P M", 6},
      {"10:00 ampm", 8},
      {"9:5", 3},
      {"010:05", 1},
      {"10:005", 6},
      {"10:00:", 6},
      {"10:00:5", 7},
      {"10:00:00.5", 8},
      // Dates.
      {"2026-12-01T10", 13},
      {"2026-13-01", 5},
      {"2026-12-32", 8},
      {"2026-00-01", 5},
      {"2026-12-00", 8},
      {"2026-1-01", 0},
      {"26-12-01", 0},
      {"2026/12/01", 0},
      {"10000-01-01", 2},
      {"2026-12", 0},
      {"2026-", 0},
      {"2026", 0},
      {"20261201", 0},
      {"2026-12-01T25:00", 11},
      {"2026-12-01T10:00:00Z", 19},
      {"12/01/2026", 8},
      {"13/01", 0},
      {"12/32", 3},
      {"12/01/6", 7},
      {"12/01/266", 9},
      {"1201261", 7},
      {"12011", 5},
      {"1/1/1", 5},
      {"12/01-10", 8},
      {"12/01-25:00", 6},
      {"1", 1},
      {"12345", 2},
      {"1234567", 2},
      {"12/", 3},
      {"12/0", 2},
      {"12//01", 3},
      {"12-01", 2},
      {"12 01", 2},
      {"0/01", -1},
      {"00/01", 0},
      {"12/00", 3},
      {"1200", 2},
      {"0001", 0},
      {"10130", 5},
      {"T10:00100\t-12-01", 9},
      {"100", 1},
      {"100x", 1},
      {"T10:00100", 7},
      {"12/01261", 8},
      {"12/01/x", 6},
      {"12/01//", 6},
      {"12/01/:", 6},
  };
  for (const auto& [spec, pos] : cases)
    EXPECT_EQ(error(spec), "Invalid time specification (pos=" + std::to_string(pos) + "): " + spec);
  // Nothing to parse: Slurm prints only "sbatch: error: Invalid --begin specification".
  for (const char* blank : {"", " ", "T", "TT", "-", "T-T "}) EXPECT_EQ(error(blank), "") << blank;
}

TEST_F(TimeSpec, LocalTimeZone) {
  if (!std::filesystem::exists("/usr/share/zoneinfo/Europe/Stockholm")) GTEST_SKIP() << "no tzdata";
  setenv("TZ", "Europe/Stockholm", 1);
  tzset();
  const int64_t now = at("2026-11-21T23:41:18");  // 00:41:18 on the 22nd in Stockholm
  EXPECT_EQ(iso(parse_time_spec("2026-12-01T10:00", now)), "2026-12-01T09:00:00");
  EXPECT_EQ(iso(parse_time_spec("noon", now)), "2026-11-22T11:00:00");  // today there
  EXPECT_EQ(iso(parse_time_spec("tomorrow", now)), "2026-11-22T23:00:00");
  EXPECT_EQ(iso(parse_time_spec("2026-07-01T10:00", now)), "2026-07-01T08:00:00");  // CEST
}
