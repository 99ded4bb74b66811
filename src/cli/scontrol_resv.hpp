#pragma once
// scontrol's reservation commands; each returns the exit status.
#include <string>
#include <vector>

namespace drover::cli {

// "scontrol show reservation [NAME]".
int reservation_show(const std::string& name, bool one_liner);
// "scontrol create reservation KEY=VALUE..." / "scontrol update ReservationName=X KEY=VALUE...".
int reservation_create_or_update(bool create, const std::vector<std::string>& words);
// "scontrol delete reservation NAME" / "delete ReservationName=NAME"; `tag` is the word
// after "delete" as typed (Slurm prints it in errors).
int reservation_delete(const std::string& tag, const std::string& name);

}  // namespace drover::cli
