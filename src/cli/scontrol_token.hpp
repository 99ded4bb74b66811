#pragma once
// scontrol token [lifespan=N|infinite] [username=U]: a JWT for the REST API (X-SLURM-USER-TOKEN)
// from the controller, which knows the caller by the socket's peer credentials. Prints
// "SLURM_JWT=<token>" as Slurm does.
#include <string>
#include <vector>

namespace drover::cli {

int scontrol_token(const std::vector<std::string>& args);

}  // namespace drover::cli
