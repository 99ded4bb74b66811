#include "cli/scontrol_token.hpp"

#include <climits>
#include <iostream>

#include "cli/client.hpp"
#include "core/text.hpp"
#include "proto/request.hpp"

namespace drover::cli {

int scontrol_token(const std::vector<std::string>& args) {
  proto::TokenRequest req;
  for (const auto& a : args) {
    const std::string key = core::to_lower(a.substr(0, a.find('=') + 1));
    const std::string value = a.substr(a.find('=') + 1);
    if (key == "lifespan=") {
      const std::string v = core::to_lower(value);
      if (v == "infinite" || v == "unlimited") {
        req.lifespan = INT_MAX - 1;  // as Slurm: the largest lifespan it issues
        continue;
      }
      std::size_t used = 0;
      long long n = -1;
      try {
        n = std::stoll(value, &used);
      } catch (const std::exception&) {
      }
      if (used != value.size() || n < 0 || n >= INT_MAX) {
        std::cerr << "Invalid numeric value \"" << value << "\" for lifespan.\n";
        return 1;
      }
      req.lifespan = n;
    } else if (key == "username=") {
      req.username = value;
    } else {
      std::cerr << "Invalid option: `" << a << "`\n";
      return 1;
    }
  }
  json r;
  try {
    r = call_controller(req);
  } catch (const ControllerUnreachable&) {
    std::cerr << "scontrol: error: slurm_fetch_token: error receiving response: Unable to "
                 "contact slurm controller (connect failure)\n";
    return 1;
  }
  if (!r.value("ok", false)) {
    std::cerr << "scontrol: error: slurm_fetch_token: error with request: "
              << r.value("error", "Unspecified error") << '\n';
    return 1;
  }
  std::cout << "SLURM_JWT=" << r.value("token", "") << '\n';
  return 0;
}

}  // namespace drover::cli
