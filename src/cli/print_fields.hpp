#pragma once
// Slurm's print_fields, as sacctmgr and sreport print their tables: each cell padded to its
// column's width and followed by a space (negative widths left-justify), headers cut to the
// width, a line of dashes under them, text too wide cut with a '+' at the end, numbers never
// cut; -p ("parsable": every cell followed by '|') and -P ("parsable2": no '|' after the last).
#include <string>
#include <vector>

namespace drover::cli {

struct PrintColumn {
  std::string header;
  int width = 10;  // negative: left-justified
};

struct PrintCell {
  std::string text;
  bool number = false;  // numbers are never cut
};

struct PrintOptions {
  bool parsable = false;   // -p
  bool parsable2 = false;  // -P
  bool no_header = false;  // -n
};

class FieldPrinter {
 public:
  FieldPrinter(std::vector<PrintColumn> columns, PrintOptions options)
      : columns_(std::move(columns)), options_(options) {}
  // The header line(s); "" with -n.
  std::string header() const;
  std::string row(const std::vector<PrintCell>& cells) const;
  const std::vector<PrintColumn>& columns() const { return columns_; }

 private:
  std::vector<PrintColumn> columns_;
  PrintOptions options_;
};

// A "name%W" format item split into its name and width (nullopt width: the field's default).
struct FormatItem {
  std::string name;
  bool has_width = false;
  int width = 0;
};
std::vector<FormatItem> parse_format_list(const std::string& list);

}  // namespace drover::cli
