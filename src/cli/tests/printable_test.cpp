// Control characters in user-supplied strings never reach a terminal raw (issue 17).
#include <gtest/gtest.h>

#include <iostream>
#include <sstream>

#include "cli/format.hpp"
#include "cli/print_fields.hpp"

using namespace drover::cli;

TEST(Printable, EscapesControlCharacters) {
  EXPECT_EQ(printable("a\x1b[2Jb"), "a\\x1b[2Jb");
  EXPECT_EQ(printable("tab\there"), "tab\\there");
  EXPECT_EQ(printable("two\nlines\r"), "two\\nlines\\r");
  EXPECT_EQ(printable(std::string("nul\0x", 5)), "nul\\x00x");
  EXPECT_EQ(printable("del\x7f"), "del\\x7f");
  EXPECT_EQ(printable("bell\a"), "bell\\x07");
  // C1 controls as UTF-8 (U+009B is CSI to many terminals).
  EXPECT_EQ(printable("c1\xc2\x9b"
                      "2J"),
            "c1\\u009b2J");
}

TEST(Printable, LeavesOrdinaryTextAsSlurmPrintsIt) {
  EXPECT_EQ(printable("job_1 name-with.dots"), "job_1 name-with.dots");
  EXPECT_EQ(printable("caf\xc3\xa9 \xe2\x82\xac"), "caf\xc3\xa9 \xe2\x82\xac");  // é €
  EXPECT_EQ(printable("\xc2\xa0nbsp"), "\xc2\xa0nbsp");                          // U+00A0
  EXPECT_EQ(printable("back\\slash|pipe"), "back\\slash|pipe");
  EXPECT_EQ(printable(""), "");
}

TEST(Printable, FitEscapesBeforeCuttingToTheWidth) {
  EXPECT_EQ(fit("a\x1b[2Jb", 0, false), "a\\x1b[2Jb");
  EXPECT_EQ(fit("a\nb", 6, false), "a\\nb  ");
  EXPECT_EQ(fit("\x1b[31mred", 4, true), "\\x1b");
}

TEST(Printable, ParsableRowsKeepOneLineAndTheirColumns) {
  FieldPrinter p({{"JobName", 10}, {"State", 10}}, PrintOptions{false, true, true});
  EXPECT_EQ(p.row({{"a\nb\tc"}, {"RUNNING"}}), "a\\nb\\tc|RUNNING\n");
  FieldPrinter fixed({{"JobName", -10}, {"State", 10}}, PrintOptions{});
  EXPECT_EQ(fixed.row({{"x\x1by"}, {"RUNNING"}}), "x\\x1by        RUNNING \n");
}

TEST(Printable, TerminalGuardEscapesWhateverAPrinterWrites) {
  std::ostringstream out, err;
  std::streambuf* old_out = std::cout.rdbuf(out.rdbuf());
  std::streambuf* old_err = std::cerr.rdbuf(err.rdbuf());
  {
    TerminalGuard guard;
    std::cout << "JOBID\tNAME\n"
              << 1 << '\t' << "a\x1b]0;pwned\x07"
              << "b\n";
    std::cout << "split \xc2";  // a C1 control across two writes
    std::cout << "\x9b"
              << "end\n";
    std::cerr << "error: \x1b[2J\n";
  }
  std::cout.rdbuf(old_out);
  std::cerr.rdbuf(old_err);
  EXPECT_EQ(out.str(), "JOBID\tNAME\n1\ta\\x1b]0;pwned\\x07b\nsplit \\u009bend\n");
  EXPECT_EQ(err.str(), "error: \\x1b[2J\n");
}
