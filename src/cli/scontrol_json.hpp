#pragma once
// scontrol show job|node|partition|reservation --json: data_parser v0.0.44 documents from the
// controller's answers (the REST API's mapping), so tests run them against canned replies.
#include <string>
#include <vector>

#include "cli/report_cmds.hpp"

namespace drover::cli {

// Whether `scontrol show WHAT --json` is one drover writes.
bool scontrol_shows_json(const std::string& what);

// `what` is show's entity ("job", "nodes", ...), `id` what it names ("" for all); `argv` is
// the whole command line after the program name, for meta.command. What does not exist is an
// entry in the document's "errors" and exit 1. Throws ControllerUnreachable.
CommandResult scontrol_show_json(const std::string& what, const std::string& id,
                                 const std::vector<std::string>& argv, const CommandEnv& env);

}  // namespace drover::cli
