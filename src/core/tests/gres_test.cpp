#include "core/gres.hpp"

#include <gtest/gtest.h>

using namespace drover::core;

TEST(Gres, ParsesNodeAndJobForms) {
  EXPECT_EQ(parse_gres_list("gpu:2"), (std::vector<GresCount>{{"gpu", "", 2}}));
  EXPECT_EQ(parse_gres_list("gpu:a100:4(S:0-1),nic"),
            (std::vector<GresCount>{{"gpu", "a100", 4}, {"nic", "", 1}}));
  EXPECT_EQ(parse_gres_list("gpu:1g.10gb"), (std::vector<GresCount>{{"gpu", "1g.10gb", 1}}));
  EXPECT_EQ(parse_gpu_count("a100:3"), (GresCount{"gpu", "a100", 3}));
  for (const char* bad : {"", "gpu:x:y:z", "gpu:a:", ":2", "gpu::1"})
    EXPECT_THROW(parse_gres_list(bad), ParseError) << bad;
  EXPECT_THROW(parse_gpu_count("0"), ParseError);
  EXPECT_THROW(parse_gpu_count("x"), ParseError);
}

TEST(Gres, TakeAndGiveBackNeverOvercommit) {
  const std::vector<GresCount> have = {{"gpu", "a100", 2}, {"gpu", "v100", 1}};
  std::vector<GresCount> used;
  EXPECT_EQ(gres_free(have, used, {"gpu", "", 1}), 3);
  std::vector<GresCount> taken;
  gres_take(have, used, {"gpu", "", 1}, 3, &taken);
  EXPECT_EQ(gres_free(have, used, {"gpu", "", 1}), 0);
  EXPECT_EQ(taken, (std::vector<GresCount>{{"gpu", "a100", 2}, {"gpu", "v100", 1}}));
  gres_give_back(used, {{"gpu", "v100", 1}});
  EXPECT_EQ(gres_free(have, used, {"gpu", "v100", 1}), 1);
  EXPECT_EQ(gres_free(have, used, {"gpu", "a100", 1}), 0);
  EXPECT_EQ(format_gres_list(taken), "gpu:a100:2,gpu:v100:1");
}
