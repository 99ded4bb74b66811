#pragma once
#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <streambuf>
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

// The same for a command that knows its codes: an unknown one stays in the text as written
// ("%-6P" prints as such) and is added to `unknown`, as Slurm's squeue reports it.
std::vector<FormatField> parse_format(std::string_view spec, const std::function<bool(char)>& known,
                                      std::vector<char>& unknown);

// The first line of the long listings (squeue -l, sinfo -l): "Sun Nov 22 08:31:37 2026".
std::string date_line(int64_t now);

// A uid's user name (the uid as a number when it has none; "drover-operator" for the
// controller's Kubernetes operator, which acts as uid (uid_t)-1).
std::string user_name(uint32_t uid);

// `value` with its control characters (C0, DEL, and C1 as UTF-8) made visible as C escapes:
// "\t", "\n", "\r", else "\x1b" (C1: "\u009b"). User-supplied strings (names, comments,
// paths, reasons) go through it before they reach another user's terminal, so that they can
// neither drive it (ESC sequences) nor break a column or line apart. The escapes read as in
// bash's $'...', which names the same job again (`scancel --name=$'a\x1bb'`). A backslash
// stays as it is, so ordinary names print exactly as Slurm prints them.
std::string printable(std::string_view value);

// Makes the listing commands' whole output (stdout and stderr) safe for a terminal: every
// control character but newline and tab written through std::cout/std::cerr is escaped as
// printable() does, whichever printer wrote it. Lives until the command exits.
class TerminalGuard {
 public:
  TerminalGuard();
  ~TerminalGuard();
  TerminalGuard(const TerminalGuard&) = delete;
  TerminalGuard& operator=(const TerminalGuard&) = delete;

 private:
  std::unique_ptr<std::streambuf> out_, err_;
  std::streambuf* old_out_;
  std::streambuf* old_err_;
};

// Widths in formats stop at this many characters. Slurm takes any width (squeue -O Name:N
// crashes, sinfo -o '%999999999N' writes a gigabyte per line); a field this wide still holds
// any name, node list or comment a cluster has.
inline constexpr int kMaxFieldWidth = 4096;

// One more digit of a width being read, capped at kMaxFieldWidth.
inline int add_width_digit(int width, char digit) {
  return std::min(kMaxFieldWidth, width * 10 + (digit - '0'));
}

// A width as atoi reads it (blanks, a sign, digits; 0 when none), capped at +/-kMaxFieldWidth.
int parse_width(std::string_view s);

// Pads or truncates `value` to the field's width, as Slurm's printers do; control characters
// escaped (printable()).
std::string fit(const std::string& value, int width, bool right);

// Renders rows: `value(code, row)` gives each field's text; `header(code)` the column title.
std::string render_table(const std::vector<FormatField>& fields, size_t rows,
                         const std::function<std::string(char, size_t)>& value,
                         const std::function<std::string(char)>& header, bool with_header);

}  // namespace drover::cli
