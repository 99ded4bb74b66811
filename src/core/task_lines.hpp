#pragma once
// Tasks' output in whole lines, as Slurm's step daemon passes it on: lines of different tasks
// never interleave, a partial line waits for its end (or the task's end), and with -l each line
// is labelled "<task>: ", the id right-aligned to the width of the largest task id. srun prints
// it so; an -o/-e file of a labelled step gets it so too.
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>

namespace drover::core {

class TaskLines {
 public:
  // unbuffered (-u): without labels, bytes pass as they come; with them, a partial line is
  // labelled and passed at once too.
  TaskLines(uint32_t ntasks, bool label, bool unbuffered);

  // What to write now after `task` wrote `data` to its stream `fd` (1 or 2).
  std::string add(uint32_t task, int fd, std::string_view data);
  // What is left of the task's stream once it closed: its unterminated last line (ended with a
  // newline when labelled), or "".
  std::string flush(uint32_t task, int fd);
  // "  7: " (empty without labels).
  std::string prefix(uint32_t task) const;

 private:
  bool label_, unbuffered_;
  int width_ = 1;
  std::map<std::pair<uint32_t, int>, std::string> partial_;
};

}  // namespace drover::core
