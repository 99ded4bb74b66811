// Tasks' output in whole lines, labelled as srun -l labels it (docs/srun-reference.md, 3).
#include "core/task_lines.hpp"

#include <gtest/gtest.h>

using drover::core::TaskLines;

TEST(TaskLines, LabelsWholeLinesRightAligned) {
  TaskLines lines(12, true, false);
  EXPECT_EQ(lines.prefix(3), " 3: ");
  EXPECT_EQ(lines.prefix(11), "11: ");
  EXPECT_EQ(lines.add(3, 1, "a\nb"), " 3: a\n");
  EXPECT_EQ(lines.add(11, 1, "x\n"), "11: x\n");     // another task's line is not held up
  EXPECT_EQ(lines.add(3, 2, "err\n"), " 3: err\n");  // each stream has its own partial line
  EXPECT_EQ(lines.add(3, 1, "c\nd\n"), " 3: bc\n 3: d\n");
  EXPECT_EQ(lines.add(3, 1, "tail"), "");
  EXPECT_EQ(lines.flush(3, 1), " 3: tail\n");  // an unterminated last line gets its newline
  EXPECT_EQ(lines.flush(3, 1), "");
  EXPECT_EQ(TaskLines(101, true, false).prefix(7), "  7: ");
  EXPECT_EQ(TaskLines(1, true, false).prefix(0), "0: ");
}

TEST(TaskLines, UnlabelledKeepsBytesAndPartialLines) {
  TaskLines lines(2, false, false);
  EXPECT_EQ(lines.prefix(1), "");
  EXPECT_EQ(lines.add(1, 1, "no newline"), "");
  EXPECT_EQ(lines.add(0, 1, "x\n"), "x\n");
  EXPECT_EQ(lines.flush(1, 1), "no newline");  // passed on as the task left it
}

TEST(TaskLines, Unbuffered) {
  TaskLines raw(2, false, true);
  EXPECT_EQ(raw.add(0, 1, "par"), "par");
  EXPECT_EQ(raw.flush(0, 1), "");
  TaskLines labelled(2, true, true);
  EXPECT_EQ(labelled.add(1, 1, "a\npar"), "1: a\n1: par");
  EXPECT_EQ(labelled.flush(1, 1), "");
}
