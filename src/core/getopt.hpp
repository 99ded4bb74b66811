#pragma once
// getopt_long as glibc does it, without touching the process: options in any order with
// non-options collected aside ("--" ends the options), bundled short options ("-hl"),
// "-pVALUE"/"-p VALUE", "--long=VALUE"/"--long VALUE", optional arguments ("-j5", "--jobs=5";
// never the next word), unambiguous prefixes of long options, and getopt's error messages.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace drover::core {

enum class ArgKind { None, Required, Optional };

struct LongOption {
  const char* name;
  ArgKind arg;
  int id;  // what parse_options reports (a short option's character, or any other number)
};

struct ParsedOption {
  int id;
  std::optional<std::string> value;
};

struct ParsedArgs {
  std::vector<ParsedOption> options;  // in command-line order
  std::vector<std::string> operands;  // the non-option words
  // getopt's complaint ("sprio: invalid option -- 'Z'"), without the newline; parsing stops
  // there, so `options` holds those before it (a caller acting on each in turn, as getopt's
  // loop does, meets --help before the complaint).
  std::string error;
};

// `shorts` is getopt's string ("hj::lo:": ':' an argument, '::' an optional one; a leading
// '+' stops at the first operand, which starts the operands, as srun's command does). An empty
// `program` leaves the program's name out of `error`.
ParsedArgs parse_options(std::string_view program, const std::vector<std::string>& args,
                         std::string_view shorts, const std::vector<LongOption>& longs);

}  // namespace drover::core
