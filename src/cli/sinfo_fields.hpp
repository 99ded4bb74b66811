#pragma once
// sinfo's fields: one table for -o's letters and -O's names, with each field's title, its value
// for a line of nodes, and how it groups nodes into lines.
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace drover::cli::sinfo {

using nlohmann::json;

// One line of sinfo: nodes of a partition (or, for formats without partition fields, of the
// partitions alike) that print alike. A line may have no nodes: a partition none of whose nodes
// passed the filters still gets one.
struct Line {
  const json* partition = nullptr;
  std::vector<const json*> nodes;
};

struct Context {
  std::function<std::string(uint32_t)> user_name;  // who set a node's reason
};

// How a field takes part in grouping nodes into lines.
enum class Grouping {
  Partition,  // a partition's setting: partitions that differ in it get lines of their own
  Node,       // nodes that differ in it get lines of their own
  Exact,      // nodes that differ in it share a line unless -e; sizes show their smallest
              // ("2+") or their range
  Summary,    // counts or lists of the line's nodes
};

struct Field {
  const char* name;  // -O name, lower case
  char code;         // -o letter; 0 when only -O has the field
  const char* header;
  Grouping grouping;
  std::string (*value)(const Line& line, const Context& ctx);
};

const Field* field_by_code(char code);
const Field* field_by_name(std::string_view name);  // case-insensitive, whole names only

// A column of output: literal text, then a field padded or cut to its width, then a suffix.
struct Column {
  std::string literal;           // -o's text before the field (or after the last one)
  const Field* field = nullptr;  // null: literal text only
  int width = 0;                 // 0: the value's own width; < 0: the field prints nothing
  bool right = false;
  bool widest = false;  // '#' (sinfo's own formats only): as wide as the widest value
  std::string suffix;   // -O's text after the size
};

// sinfo's -o "%all" and -O "All": every letter, each followed by a bar.
extern const char* const kAllFormat;

// -o: "%[.][size]letter" with text between. An unknown letter stays in the text as written and
// is reported in `errors` with Slurm's wording; `builtin` formats (sinfo's own) may use '#'.
std::vector<Column> parse_letters(std::string_view spec, bool builtin, std::string& errors);
// -O: "name[:[.][size][suffix]]" separated by commas; 20 characters unless a size is given.
std::vector<Column> parse_names(std::string_view spec, std::string& errors);

// The header line (when asked for) and one line of text per Line.
std::string render(const std::vector<Column>& columns, const std::vector<Line>& lines,
                   const Context& ctx, bool with_header);

// A node's value of a field, as grouping compares nodes.
std::string node_key(const Field& f, const json& node, const Context& ctx);
// A partition's value of a field, as grouping compares partitions.
std::string partition_key(const Field& f, const json& partition, const Context& ctx);

// The compact state without its flag suffixes ("idle*" -> "idle"), and sinfo's long name for a
// compact state ("drng" -> "draining", "idle*" -> "idle*").
std::string base_state(std::string compact);
std::string long_state(const std::string& compact);

}  // namespace drover::cli::sinfo
