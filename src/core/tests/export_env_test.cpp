#include "core/export_env.hpp"

#include <gtest/gtest.h>

using namespace drover::core;
using Env = std::map<std::string, std::string>;

// Every expectation here was checked against Slurm 22.05: sbatch run under `env -i` with the
// submit environment below, the batch shell printing `env`. Variables the node adds (the
// SLURM_* batch variables, TMPDIR, the login environment) are left out.

namespace {
Env submit_env() {
  return {{"FOO", "bar"},       {"HOME", "/root"},   {"MYVAR", "mv"}, {"PATH", "/usr/bin"},
          {"SBATCH_BAR", "sb"}, {"SALLOC_Y", "1"},   {"SRUN_Z", "1"}, {"SLURM_FOO", "sf"},
          {"SLURMD_X", "1"},    {"SLURMX", "1"},     {"SLURM", "2"},  {"SLURM_", "3"},
          {"slurm_low", "4"},   {"SLURM_CONF", "/c"}};
}
}  // namespace

TEST(ExportEnv, DefaultAndExactAllPassEverythingAndAddNothing) {
  const Env env = submit_env();
  EXPECT_EQ(exported_environment(std::nullopt, env), env);
  EXPECT_EQ(exported_environment(std::string("ALL"), env), env);
  EXPECT_EQ(exported_environment(std::string("all"), env), env);
  EXPECT_FALSE(export_wants_user_env(std::nullopt));
  EXPECT_FALSE(export_wants_user_env(std::string("ALL")));
  EXPECT_FALSE(export_wants_user_env(std::string("All")));
}

TEST(ExportEnv, NonePassesEverythingStartingWithSlurm) {
  // --export=NONE: SLURM, SLURMX, SLURMD_X, SLURM_, SLURM_FOO and SLURM_CONF pass; SBATCH_*,
  // SALLOC_*, SRUN_*, slurm_low and the rest do not.
  const Env want = {{"SLURM", "2"},
                    {"SLURMX", "1"},
                    {"SLURMD_X", "1"},
                    {"SLURM_", "3"},
                    {"SLURM_FOO", "sf"},
                    {"SLURM_CONF", "/c"},
                    {"SLURM_EXPORT_ENV", "NONE"},
                    {"SLURM_GET_USER_ENV", "1"}};
  EXPECT_EQ(exported_environment(std::string("NONE"), submit_env()), want);
  Env lower = want;
  lower["SLURM_EXPORT_ENV"] = "none";
  EXPECT_EQ(exported_environment(std::string("none"), submit_env()), lower);
  EXPECT_TRUE(export_wants_user_env(std::string("NONE")));
}

TEST(ExportEnv, NilAndListsPassOnlySlurmUnderscore) {
  // --export=NIL: only names starting with "SLURM_".
  EXPECT_EQ(exported_environment(std::string("NIL"), submit_env()),
            (Env{{"SLURM_", "3"},
                 {"SLURM_FOO", "sf"},
                 {"SLURM_CONF", "/c"},
                 {"SLURM_EXPORT_ENV", "NIL"},
                 {"SLURM_GET_USER_ENV", "1"}}));
  // --export=MYVAR,NEW=x: NONE plus those (not ALL).
  EXPECT_EQ(exported_environment(std::string("MYVAR,NEW=x"), submit_env()),
            (Env{{"MYVAR", "mv"},
                 {"NEW", "x"},
                 {"SLURM_", "3"},
                 {"SLURM_FOO", "sf"},
                 {"SLURM_CONF", "/c"},
                 {"SLURM_EXPORT_ENV", "MYVAR,NEW=x"},
                 {"SLURM_GET_USER_ENV", "1"}}));
  // --export=NONE,MYVAR is a list: SLURMD_X does not pass.
  Env got = exported_environment(std::string("NONE,MYVAR"), submit_env());
  EXPECT_EQ(got["MYVAR"], "mv");
  EXPECT_EQ(got.count("SLURMD_X"), 0u);
  EXPECT_EQ(got.count("FOO"), 0u);
  EXPECT_EQ(got["SLURM_EXPORT_ENV"], "NONE,MYVAR");
  // A name the submit environment lacks exports nothing; an empty spec is an empty list.
  got = exported_environment(std::string("NOSUCH"), submit_env());
  EXPECT_EQ(got.count("NOSUCH"), 0u);
  got = exported_environment(std::string(""), submit_env());
  EXPECT_EQ(got.count("FOO"), 0u);
  EXPECT_EQ(got["SLURM_FOO"], "sf");
  EXPECT_EQ(got["SLURM_EXPORT_ENV"], "");
  EXPECT_EQ(got["SLURM_GET_USER_ENV"], "1");
  EXPECT_TRUE(export_wants_user_env(std::string("")));
}

TEST(ExportEnv, AllWithItemsAppliesLeftToRight) {
  // ALL,NEW=x: everything plus NEW; the login environment is wanted too.
  Env got = exported_environment(std::string("ALL,NEW=x"), submit_env());
  Env want = submit_env();
  want["NEW"] = "x";
  want["SLURM_EXPORT_ENV"] = "ALL,NEW=x";
  want["SLURM_GET_USER_ENV"] = "1";
  EXPECT_EQ(got, want);
  EXPECT_TRUE(export_wants_user_env(std::string("ALL,NEW=x")));
  // ALL,FOO=baz sets FOO; FOO=baz,ALL leaves the submitted FOO=bar.
  EXPECT_EQ(exported_environment(std::string("ALL,FOO=baz"), submit_env())["FOO"], "baz");
  EXPECT_EQ(exported_environment(std::string("FOO=baz,ALL"), submit_env())["FOO"], "bar");
  // myvar,all: ALL is matched in any case, and everything passes.
  got = exported_environment(std::string("MYVAR,all"), submit_env());
  EXPECT_EQ(got["FOO"], "bar");
  EXPECT_EQ(got["SBATCH_BAR"], "sb");
  // ALL,NONE: NONE inside a list removes nothing.
  EXPECT_EQ(exported_environment(std::string("ALL,NONE"), submit_env())["FOO"], "bar");
}

TEST(ExportEnv, SubmittedSlurmVariablesWinOverListedOnes) {
  // NONE,SLURM_FOO=over and ALL,SLURM_FOO=over both give the submitted SLURM_FOO=sf.
  EXPECT_EQ(exported_environment(std::string("NONE,SLURM_FOO=over"), submit_env())["SLURM_FOO"],
            "sf");
  EXPECT_EQ(exported_environment(std::string("ALL,SLURM_FOO=over"), submit_env())["SLURM_FOO"],
            "sf");
  // A listed SLURM_ variable that was not submitted is set.
  EXPECT_EQ(exported_environment(std::string("SLURM_NEW=1"), submit_env())["SLURM_NEW"], "1");
}

TEST(ExportEnv, ValuesAreVerbatimAndQuotesProtectCommas) {
  Env got = exported_environment(std::string("NEW=\"a,b\",NEW2=c"), submit_env());
  EXPECT_EQ(got["NEW"], "\"a,b\"");
  EXPECT_EQ(got["NEW2"], "c");
  got = exported_environment(std::string("NEW='a,b',N2=y"), submit_env());
  EXPECT_EQ(got["NEW"], "'a,b'");
  EXPECT_EQ(got["N2"], "y");
  got = exported_environment(std::string("NEW=x\"a,b\"y,N2=z"), submit_env());
  EXPECT_EQ(got["NEW"], "x\"a,b\"y");
  EXPECT_EQ(got["N2"], "z");
  // No backslash escape: NEW=a\,b is NEW=a\ and a name "b".
  got = exported_environment(std::string("NEW=a\\,b"), submit_env());
  EXPECT_EQ(got["NEW"], "a\\");
  EXPECT_EQ(got.count("b"), 0u);
  // Further '=' and spaces are part of the value; an empty value is kept.
  got = exported_environment(std::string("NEW=a=b,E="), submit_env());
  EXPECT_EQ(got["NEW"], "a=b");
  EXPECT_EQ(got.count("E"), 1u);
  EXPECT_EQ(got["E"], "");
  got = exported_environment(std::string("NEW=a b,N2= c"), submit_env());
  EXPECT_EQ(got["NEW"], "a b");
  EXPECT_EQ(got["N2"], " c");
  // The last of repeated items wins; an item without a name is ignored.
  EXPECT_EQ(exported_environment(std::string("NEW=1,NEW=2"), submit_env())["NEW"], "2");
  got = exported_environment(std::string("=x,MYVAR"), submit_env());
  EXPECT_EQ(got.count(""), 0u);
  EXPECT_EQ(got["MYVAR"], "mv");
}

TEST(ExportEnv, NestedSubmissionKeepsParentsExportEnv) {
  // Submitted from inside a job with SLURM_EXPORT_ENV=XX and SLURM_GET_USER_ENV=0:
  // --export=NONE keeps SLURM_EXPORT_ENV=XX but sets SLURM_GET_USER_ENV=1; the default keeps
  // both as submitted.
  Env env = {{"SLURM_EXPORT_ENV", "XX"}, {"SLURM_GET_USER_ENV", "0"}, {"FOO", "bar"}};
  Env got = exported_environment(std::string("NONE"), env);
  EXPECT_EQ(got["SLURM_EXPORT_ENV"], "XX");
  EXPECT_EQ(got["SLURM_GET_USER_ENV"], "1");
  got = exported_environment(std::string("ALL,SLURM_FOO=over"), env);
  EXPECT_EQ(got["SLURM_EXPORT_ENV"], "XX");
  EXPECT_EQ(exported_environment(std::nullopt, env), env);
}

TEST(ExportEnv, LoginEnvironmentOnlyFillsGaps) {
  // --export=ALL,NEW=x: the submitted PATH stays; MAIL and SHLVL come from the login shell.
  Env env = {{"PATH", "/usr/bin"}, {"NEW", "x"}};
  add_login_environment(env, {{"PATH", "/login/bin"}, {"MAIL", "/var/mail/u"}, {"SHLVL", "1"}});
  EXPECT_EQ(env,
            (Env{{"PATH", "/usr/bin"}, {"NEW", "x"}, {"MAIL", "/var/mail/u"}, {"SHLVL", "1"}}));
}
