// libFuzzer entry for output filename patterns.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/output_pattern.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  drover::core::PatternContext ctx;
  ctx.job_id = 4242;
  ctx.job_name = "job";
  ctx.user = "user";
  ctx.first_node = "node1.example";
  drover::core::expand_output_pattern(in, ctx);
  ctx.array_task_id = 3;
  ctx.array_job_id = 4240;
  ctx.step_id = 0;
  drover::core::expand_output_pattern(in, ctx);
  return 0;
}
