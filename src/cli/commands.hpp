#pragma once
#include <string>
#include <vector>

namespace drover::cli {

// Each Slurm-named command; args exclude the program name. Returns the exit code.
int sbatch_main(const std::vector<std::string>& args);
int squeue_main(const std::vector<std::string>& args);
int sinfo_main(const std::vector<std::string>& args);
int scancel_main(const std::vector<std::string>& args);
int scontrol_main(const std::vector<std::string>& args);
int sprio_main(const std::vector<std::string>& args);
int sshare_main(const std::vector<std::string>& args);
int sacct_main(const std::vector<std::string>& args);
int sacctmgr_main(const std::vector<std::string>& args);
int sreport_main(const std::vector<std::string>& args);
int srun_main(const std::vector<std::string>& args);
int salloc_main(const std::vector<std::string>& args);

// This process's umask as Slurm sends it in SLURM_UMASK ("0077", sbatch and srun): the job's
// processes run with it and create their output files with it.
std::string umask_string();

}  // namespace drover::cli
