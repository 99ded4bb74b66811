// The help tables: what --help lists is what the man page lists, in roff that man can read.
#include "cli/help.hpp"

#include <gtest/gtest.h>

#include <string>

namespace drover::cli {
namespace {

std::string roff_option(const std::string& name) {
  std::string out = "\\-\\-";
  for (char c : name) out += c == '-' ? std::string("\\-") : std::string(1, c);
  return out;
}

TEST(Help, ListedLongOptionsReadsOnlyTheOptionColumn) {
  const std::string text =
      "Usage: x [OPTIONS]\n"
      "  -a, --all                   everything; see also --hidden\n"
      "      --bb=<spec>             burst buffers\n"
      "                              --not-an-option in a description\n"
      "     -p or --parsable: '|' between fields\n"
      "     -u,--uid       act as another user\n"
      "     -t <time_format>: units\n"
      "             - Start=<OPT>   - not an option either\n"
      "  --help                      this help\n";
  EXPECT_EQ(listed_long_options(text),
            (std::vector<std::string>{"all", "bb", "help", "parsable", "uid"}));
}

TEST(Help, EveryCommandHasAPageListingItsOptions) {
  ASSERT_EQ(all_command_help().size(), 12u);
  for (const CommandHelp* h : all_command_help()) {
    SCOPED_TRACE(std::string(h->name));
    const auto options = listed_long_options(h->help);
    EXPECT_GE(options.size(), 10u);
    EXPECT_FALSE(h->usage.empty());
    EXPECT_FALSE(h->notes.empty());
    const std::string page = man_page(*h);
    EXPECT_EQ(page.rfind(".TH ", 0), 0u);
    EXPECT_NE(page.find(".SH DROVER NOTES\n.PP\n"), std::string::npos);
    for (const std::string& o : options)
      EXPECT_NE(page.find(roff_option(o)), std::string::npos) << o;
    // No line of the page starts with a control character it did not mean.
    for (std::size_t at = 0; at < page.size(); at = page.find('\n', at) + 1) {
      if (page[at] == '\'') ADD_FAILURE() << page.substr(at, 40);
      if (page[at] == '.' && page.compare(at, 4, ".TH ") != 0 && page.compare(at, 4, ".SH ") != 0 &&
          page.compare(at, 4, ".SS ") != 0 && page.compare(at, 3, ".TP") != 0 &&
          page.compare(at, 3, ".PP") != 0 && page.compare(at, 3, ".nf") != 0 &&
          page.compare(at, 3, ".fi") != 0 && page.compare(at, 3, ".nh") != 0 &&
          page.compare(at, 3, ".ad") != 0 && page.compare(at, 3, ".B ") != 0 &&
          page.compare(at, 4, ".BR ") != 0)
        ADD_FAILURE() << page.substr(at, 40);
      if (page.find('\n', at) == std::string::npos) break;
    }
  }
}

TEST(Help, RoffEscapesBackslashesAndLeadingDots) {
  const CommandHelp h{"x", "does a\\b", "Usage: x\n", "Usage: x [OPTIONS]\n.dot line\n", "n"};
  const std::string page = man_page(h);
  EXPECT_NE(page.find("does a\\eb"), std::string::npos);
  EXPECT_NE(page.find("\n\\&.dot line\n"), std::string::npos);
}

}  // namespace
}  // namespace drover::cli
