#pragma once
#include <map>
#include <optional>
#include <string>

namespace drover::core {

// sbatch --export (or SBATCH_EXPORT): which of the submitting shell's variables become the
// batch job's environment. Behaviour of real Slurm 22.05, observed on its batch shells:
//
// * No --export, or exactly "ALL" (any case): the whole submit environment, nothing added
//   (no SLURM_EXPORT_ENV, no SLURM_GET_USER_ENV).
// * Anything else is a comma-separated list applied left to right, each item overwriting what
//   is already there:
//     - "ALL" (any case): every submit variable;
//     - "NONE" / "NIL" (any case), an empty item, or one starting with '=': nothing;
//     - "NAME=value": that value, verbatim (spaces, further '=' and quotes kept);
//     - "NAME": the submit value, if the submit environment has NAME.
//   Single and double quotes protect commas ("NEW=\"a,b\"" gives NEW="a,b" with the quotes);
//   a backslash does not ("NEW=a\,b" gives NEW=a\ and an item "b"). So "FOO=x,ALL" leaves FOO
//   as submitted and "ALL,FOO=x" sets it; a list without ALL ("VAR1,VAR2=x") exports only
//   those, not the rest of the environment.
//   Then Slurm's own variables are copied from the submit environment over the result:
//     - for exactly "NONE" (any case): every variable whose name begins with "SLURM"
//       (SLURM_FOO, SLURMD_X, SLURMX, ...);
//     - otherwise (NIL, lists, ALL,...): every variable whose name begins with "SLURM_".
//   So a listed "SLURM_FOO=x" loses to a submitted SLURM_FOO. SBATCH_*, SALLOC_*, SRUN_* are
//   not passed unless ALL or the list names them.
//   Finally SLURM_EXPORT_ENV=<the spec as written> is added unless the submit environment
//   already had one (a nested sbatch keeps its parent's), and SLURM_GET_USER_ENV=1 is set
//   (overwriting any submitted value).
//
// SLURM_GET_USER_ENV=1 (every form but the default and "ALL", and also plain --get-user-env)
// makes the node add the user's login environment to the batch shell: Slurm runs the user's
// login shell to print its environment and adds every variable the job's environment does not
// already have. So an --export=NONE job does not start empty: it gets the login HOME, PATH,
// SHELL, USER, LOGNAME, MAIL, SHLVL=1, whatever the user's profile exports, and
// "_=/usr/sbin/slurmstepd"; with "ALL,..." the submitted values win and only the missing ones
// (MAIL, SHLVL, ...) are added. The node also sets TMPDIR=/tmp when it is unset, and the
// SLURM_* batch variables (core::batch_environment) over everything. add_login_environment
// below is the merge step; reading the login environment is the agent's job.
std::map<std::string, std::string> exported_environment(
    const std::optional<std::string>& export_spec,
    const std::map<std::string, std::string>& submit_env);

// True when the spec makes Slurm add the login environment (see above): anything but no
// --export at all and exactly "ALL".
bool export_wants_user_env(const std::optional<std::string>& export_spec);

// Adds each login variable that `env` does not have yet (what the node does when
// SLURM_GET_USER_ENV=1).
void add_login_environment(std::map<std::string, std::string>& env,
                           const std::map<std::string, std::string>& login_env);

}  // namespace drover::core
