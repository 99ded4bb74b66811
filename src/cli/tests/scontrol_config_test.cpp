// scontrol show config's layout (observed on Slurm 22.05): keys padded to 23 columns, the MPI
// section, the controller's state line.
#include "cli/scontrol_config.hpp"

#include <gtest/gtest.h>

using drover::cli::json;
using drover::cli::scontrol_show_config;

TEST(ScontrolConfig, Layout) {
  // As the controller sends them: arrays of [key, value] (a braced list of pairs would be
  // an object).
  using Lines = std::vector<std::pair<std::string, std::string>>;
  const Lines main = {{"AccountingStorageBackupHost", "(null)"},
                      {"AccountingStorageHost", "localhost"},
                      {"SlurmctldPrimaryOffProg", "(null)"},
                      {"PowerPlugin", ""}};
  const Lines mpi = {{"PMIxCliTmpDirBase", "(null)"}, {"PMIxTimeout", "300"}};
  json reply = {{"ok", true}, {"now", 0}, {"control_host", "ctl1"}};
  reply["config"]["main"] = main;
  reply["config"]["mpi"] = mpi;
  const auto r = scontrol_show_config(reply);
  EXPECT_EQ(r.rc, 0);
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(r.out,
            "Configuration data as of Unknown\n"
            "AccountingStorageBackupHost = (null)\n"
            "AccountingStorageHost   = localhost\n"
            "SlurmctldPrimaryOffProg = (null)\n"
            "PowerPlugin             = \n"
            "\n"
            "MPI Plugins Configuration:\n"
            "PMIxCliTmpDirBase       = (null)\n"
            "PMIxTimeout             = 300\n"
            "\n"
            "Slurmctld(primary) at ctl1 is UP\n");
}

TEST(ScontrolConfig, ControllerError) {
  const auto r = scontrol_show_config({{"ok", false}, {"error", "Unknown query"}});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "slurm_load_ctl_conf error: Unknown query\n");
}
