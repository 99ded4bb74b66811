// libFuzzer entry for squeue's own job-list reader (cli/squeue_rows.*), checked against
// nlohmann/json: what the reader takes nlohmann takes too, and the reader finds as many jobs in
// it (it may refuse more: numbers beyond 64 bits, which no reply carries). A difference, a
// crash or a sanitizer report is a bug. Text with a NUL byte or
// a byte above 0x7f is only read: nlohmann ends its input at a NUL, which the reader refuses,
// and checks UTF-8, which the reader leaves to the controller (proto::dump replaces bad bytes,
// so no reply carries them).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string_view>

#include "cli/squeue_rows.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 64 * 1024) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  drover::cli::JobList rows;
  const bool read = drover::cli::read_job_list(text, rows);
  for (const char c : text)
    if (c == '\0' || static_cast<unsigned char>(c) > 0x7f) return 0;
  const nlohmann::json tree = nlohmann::json::parse(text, nullptr, false);
  if (read && tree.is_discarded()) std::abort();
  if (!read || !tree.is_object()) return 0;
  if (tree.contains("jobs") && tree["jobs"].is_array()) {
    size_t objects = 0;
    for (const auto& j : tree["jobs"])
      if (j.is_object()) ++objects;
    if (rows.jobs.size() != objects && rows.jobs.size() != tree["jobs"].size()) std::abort();
  }
  return 0;
}
