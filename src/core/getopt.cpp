#include "core/getopt.hpp"

namespace drover::core {
namespace {

// The argument kind of short option `c` in getopt's string, or nullopt when it is not one.
std::optional<ArgKind> short_kind(std::string_view shorts, char c) {
  if (c == ':') return std::nullopt;
  auto at = shorts.find(c);
  if (at == std::string_view::npos) return std::nullopt;
  if (at + 1 < shorts.size() && shorts[at + 1] == ':')
    return (at + 2 < shorts.size() && shorts[at + 2] == ':') ? ArgKind::Optional
                                                             : ArgKind::Required;
  return ArgKind::None;
}

}  // namespace

ParsedArgs parse_options(std::string_view program, const std::vector<std::string>& args,
                         std::string_view shorts, const std::vector<LongOption>& longs) {
  ParsedArgs out;
  // An empty program leaves the complaint bare, for callers that say who complains themselves.
  const std::string prog = program.empty() ? std::string() : std::string(program) + ": ";
  const bool stop_at_operand = !shorts.empty() && shorts.front() == '+';
  if (stop_at_operand) shorts.remove_prefix(1);
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") {
      out.operands.insert(out.operands.end(), args.begin() + static_cast<long>(i) + 1, args.end());
      break;
    }
    if (a.size() < 2 || a[0] != '-') {
      if (stop_at_operand) {  // getopt's "+": the first operand ends the options
        out.operands.insert(out.operands.end(), args.begin() + static_cast<long>(i), args.end());
        break;
      }
      out.operands.push_back(a);
      continue;
    }
    if (a[1] == '-') {
      // A long option, or an unambiguous prefix of one.
      const std::string body = a.substr(2);
      const auto eq = body.find('=');
      const std::string name = body.substr(0, eq);
      const LongOption* found = nullptr;
      std::vector<const LongOption*> matches;
      for (const LongOption& o : longs) {
        if (name == o.name) {
          found = &o;
          break;
        }
        if (std::string_view(o.name).substr(0, name.size()) == name) matches.push_back(&o);
      }
      if (!found && !matches.empty()) {
        bool ambiguous = false;
        for (const LongOption* m : matches)
          ambiguous = ambiguous || m->id != matches[0]->id || m->arg != matches[0]->arg;
        if (ambiguous) {
          out.error = prog + "option '" + a + "' is ambiguous; possibilities:";
          for (const LongOption* m : matches) out.error += std::string(" '--") + m->name + "'";
          return out;
        }
        found = matches[0];
      }
      if (!found) {
        out.error = prog + "unrecognized option '" + a + "'";
        return out;
      }
      ParsedOption p{found->id, std::nullopt};
      if (eq != std::string::npos) {
        if (found->arg == ArgKind::None) {
          out.error = prog + "option '--" + found->name + "' doesn't allow an argument";
          return out;
        }
        p.value = body.substr(eq + 1);
      } else if (found->arg == ArgKind::Required) {
        if (i + 1 >= args.size()) {
          out.error = prog + "option '--" + found->name + "' requires an argument";
          return out;
        }
        p.value = args[++i];
      }
      out.options.push_back(std::move(p));
      continue;
    }
    // One or more short options.
    for (std::size_t k = 1; k < a.size(); ++k) {
      const char c = a[k];
      const auto kind = short_kind(shorts, c);
      if (!kind) {
        out.error = prog + "invalid option -- '" + std::string(1, c) + "'";
        return out;
      }
      ParsedOption p{static_cast<unsigned char>(c), std::nullopt};
      if (*kind != ArgKind::None) {
        if (k + 1 < a.size()) {
          p.value = a.substr(k + 1);
        } else if (*kind == ArgKind::Required) {
          if (i + 1 >= args.size()) {
            out.error = prog + "option requires an argument -- '" + std::string(1, c) + "'";
            return out;
          }
          p.value = args[++i];
        }
        out.options.push_back(std::move(p));
        break;
      }
      out.options.push_back(std::move(p));
    }
  }
  return out;
}

}  // namespace drover::core
