// -i/--iterate's loop (squeue and sinfo share it): dated reports, the blank line after each,
// failures that do not end it, and the pause that does.
#include "cli/iterate.hpp"

#include <gtest/gtest.h>

#include "cli/format.hpp"

namespace drover::cli {
namespace {

TEST(Iterate, ReportsUntilThePauseIsInterrupted) {
  std::string out, err;
  int reports = 0, pauses = 0;
  IterateIo io;
  io.now = [&] { return int64_t{86400} * reports; };  // a day further each report
  io.write = [&](const std::string& o, const std::string& e) {
    out += o;
    err += e;
  };
  io.pause = [&](int seconds) {
    EXPECT_EQ(seconds, 3);
    return ++pauses < 3;
  };
  // The second report fails (the controller is away): the loop carries on, as Slurm's does.
  const int rc = run_reports(
      3, true,
      [&] {
        CommandResult r;
        if (++reports == 2) {
          r.err = "slurm_load_jobs error: Unable to contact slurm controller\n";
          r.rc = 1;
        } else {
          r.out = "report " + std::to_string(reports) + "\n";
        }
        return r;
      },
      io);
  EXPECT_EQ(rc, 0);  // the last report's
  EXPECT_EQ(reports, 3);
  EXPECT_EQ(out, date_line(0) + "\nreport 1\n\n" + date_line(86400) + "\n\n" +
                     date_line(2 * 86400) + "\nreport 3\n\n");
  EXPECT_EQ(err, "slurm_load_jobs error: Unable to contact slurm controller\n");
}

TEST(Iterate, OnceWithoutSecondsAndNoDateUnlessAsked) {
  std::string out;
  IterateIo io;
  io.write = [&](const std::string& o, const std::string&) { out += o; };
  io.pause = [](int) -> bool {
    ADD_FAILURE() << "no pause without -i";
    return false;
  };
  const int rc = run_reports(
      0, false,
      [] {
        return CommandResult{"x\n", "", 1};
      },
      io);
  EXPECT_EQ(rc, 1);
  EXPECT_EQ(out, "x\n");
}

TEST(Iterate, SecondsAsSlurmReadsThem) {
  EXPECT_EQ(iterate_seconds("5"), 5);
  EXPECT_EQ(iterate_seconds("3x"), 3);
  EXPECT_EQ(iterate_seconds(" 2"), 2);
  for (const char* bad : {"0", "-1", "abc", "", "2147483648"}) EXPECT_EQ(iterate_seconds(bad), 0);
}

}  // namespace
}  // namespace drover::cli
