#pragma once
// Standard Workload Format (SWF) traces, as kept by the Parallel Workloads Archive.
//
// Header lines start with ';' ("; MaxNodes: 100"); only MaxNodes, MaxProcs and UnixStartTime
// are read, every other header line is a comment. Each job is one line of 18 whitespace-
// separated numbers, -1 meaning unknown. Some archive files (and generated traces) write
// fractional values ("2739.599152", "-0.0") in integer fields: they are accepted and rounded
// to the nearest integer, halves away from zero (2.5 -> 3, -0.0 -> 0). Blank lines and
// trailing '\r' are ignored. Anything else malformed throws core::ParseError naming the line.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace drover::sim {

struct SwfHeader {
  int64_t max_nodes = -1;  // -1: not in the header
  int64_t max_procs = -1;
  int64_t unix_start_time = -1;
};

// One job line; fields in the archive's order, times in seconds relative to the trace start.
struct SwfJob {
  int line = 0;  // 1-based line number in the file
  int64_t job_number = -1;
  int64_t submit = -1;
  int64_t wait = -1;
  int64_t run = -1;
  int64_t alloc_procs = -1;
  int64_t avg_cpu = -1;
  int64_t used_mem = -1;
  int64_t req_procs = -1;
  int64_t req_time = -1;
  int64_t req_mem = -1;
  int64_t status = -1;
  int64_t user = -1;
  int64_t group = -1;
  int64_t app = -1;
  int64_t queue = -1;
  int64_t partition = -1;
  int64_t preceding_job = -1;
  int64_t think_time = -1;
};

inline constexpr int kSwfFields = 18;
// Values beyond this magnitude are rejected as out of range (no trace comes close).
inline constexpr int64_t kSwfMaxMagnitude = 1'000'000'000'000'000;  // 1e15

// Field i (0-based) of a job by position, and its name for messages ("run time").
int64_t& swf_field(SwfJob& job, int index);
int64_t swf_field(const SwfJob& job, int index);
std::string_view swf_field_name(int index);

struct SwfTrace {
  SwfHeader header;
  std::vector<SwfJob> jobs;     // in file order
  uint64_t rounded_values = 0;  // job fields that had a fractional part and were rounded
};

// Parses a whole trace. Throws core::ParseError("line N: ...") for a malformed line.
SwfTrace parse_swf(std::string_view text);
// Reads and parses a file; errors are prefixed with the path ("PATH: line N: ...").
// An unreadable file throws std::runtime_error.
SwfTrace read_swf_file(const std::string& path);

}  // namespace drover::sim
