#pragma once
// The value forms of slurmrestd's data_parser v0.0.44: numbers that may be unset or infinite as
// {"set", "infinite", "number"}, process exit codes, TRES lists, comma lists as arrays. Shared
// by the REST API (ctld/rest_*.cpp) and the commands' --json output (cli/json_output.*).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace drover::proto::data_parser {

using nlohmann::json;

json number(int64_t n);  // {"set": true, "infinite": false, "number": n}
json unset();            // {"set": false, "infinite": false, "number": 0}
json infinite();         // {"set": false, "infinite": true, "number": 0}
json number(double n);
// A timestamp: 0 is unset.
json time_value(int64_t t);
// A time limit in minutes: negative is unlimited.
json limit(int64_t minutes);

// Signal 15 -> "TERM" (Slurm's names lack the SIG prefix); "" for 0.
std::string signal_name(int sig);
// A process exit: {"status": ["SUCCESS"|"ERROR"|"SIGNALED"|"PENDING"], "return_code",
// "signal": {"id", "name"}}. `pending`: it has not ended.
json exit_code(int code, int signal, bool pending);

// "cpu=2,mem=1G,node=1,billing=2" -> [{"type": "cpu", "name": "", "id": 1, "count": 2}, ...]
// with Slurm's TRES ids and mem in MB.
json tres_list(const std::string& tres);
// "a,b" -> ["a", "b"]; "" -> [].
json csv(const std::string& text);

// A field of one of the controller's views as text: "" when absent or null, arrays joined
// with ',', numbers and objects as JSON.
std::string str(const json& view, const char* key);
// A numeric field of a view, `dflt` when absent or not a number.
int64_t num(const json& view, const char* key, int64_t dflt = 0);

}  // namespace drover::proto::data_parser
