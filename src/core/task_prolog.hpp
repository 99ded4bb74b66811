#pragma once
// What a task prolog (srun --task-prolog, slurm.conf TaskProlog) says on its standard output,
// as Slurm reads it: "export NAME=VALUE" sets a variable of the task's environment, "unset
// NAME" removes one, "print TEXT" writes TEXT on the task's standard output; any other line is
// ignored.
#include <map>
#include <string>
#include <string_view>

namespace drover::core {

// Applies `out` to `env`; returns what is to be printed (each TEXT and a newline).
std::string apply_task_prolog_output(std::string_view out, std::map<std::string, std::string>& env);

}  // namespace drover::core
