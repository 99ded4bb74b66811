#include "core/task_prolog.hpp"

#include <gtest/gtest.h>

using drover::core::apply_task_prolog_output;

TEST(TaskProlog, ExportUnsetAndPrintAsSlurmReadsThem) {
  std::map<std::string, std::string> env = {{"HOME", "/root"}, {"KEEP", "1"}};
  const std::string printed = apply_task_prolog_output(
      "export FOO=bar baz\n"
      "print hello there\n"
      "unset HOME\n"
      "garbage line\n"
      "export  SPACED=1\n"
      "print\n"
      "exportNOT=1\n"
      "export =nameless\n"
      "export EMPTY=\n"
      "print last, no newline",
      env);
  EXPECT_EQ(printed, "hello there\nlast, no newline\n");
  EXPECT_EQ(env, (std::map<std::string, std::string>{
                     {"EMPTY", ""}, {"FOO", "bar baz"}, {"KEEP", "1"}, {"SPACED", "1"}}));
}
