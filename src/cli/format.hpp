#pragma once
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace drover::cli {

// Slurm's "%[.][width]code" output format strings (squeue -o, sinfo -o).
struct FormatField {
  std::string literal;  // text before the field (or the whole item when code == 0)
  char code = 0;
  int width = 0;         // 0: natural width
  bool right = false;    // '.' flag: right-justify
  bool dynamic = false;  // '#' width: widest value in the column
};

std::vector<FormatField> parse_format(std::string_view spec);

// Pads or truncates `value` to the field's width, as Slurm's printers do.
std::string fit(const std::string& value, int width, bool right);

// Renders rows: `value(code, row)` gives each field's text; `header(code)` the column title.
std::string render_table(const std::vector<FormatField>& fields, size_t rows,
                         const std::function<std::string(char, size_t)>& value,
                         const std::function<std::string(char)>& header, bool with_header);

}  // namespace drover::cli
