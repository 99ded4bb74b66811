// libFuzzer entry for sbatch parsing: the input is used as a batch script (directives) and,
// split at NUL bytes, as a command line and as SBATCH_* environment values.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "core/sbatch_options.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  using namespace drover::core;
  try {
    check_batch_script(in);
  } catch (const ParseError&) {
  }
  try {
    parse_sbatch_directives(scan_sbatch_directives(in));
  } catch (const ParseError& e) {
    format_sbatch_error(e);
  }
  std::vector<std::string> args;
  std::size_t pos = 0;
  while (pos <= in.size()) {
    std::size_t nul = in.find('\0', pos);
    if (nul == std::string_view::npos) nul = in.size();
    args.emplace_back(in.substr(pos, nul - pos));
    pos = nul + 1;
  }
  try {
    parse_sbatch_args(args);
  } catch (const ParseError& e) {
    format_sbatch_error(e);
  }
  static const char* kVars[] = {"SBATCH_TIMELIMIT", "SBATCH_EXCLUSIVE", "SBATCH_MEM_PER_CPU",
                                "SBATCH_WAIT",      "SBATCH_SIGNAL",    "SBATCH_DISTRIBUTION",
                                "SBATCH_NO_KILL",   "SBATCH_REQ_SWITCH"};
  std::map<std::string, std::string> env;
  for (std::size_t i = 0; i < args.size() && i < std::size(kVars); ++i) env[kVars[i]] = args[i];
  try {
    apply_sbatch_env(env, {});
  } catch (const ParseError&) {
  }
  return 0;
}
