#include "ctld/payload.hpp"

namespace drover::ctld {

void complete_launch(nlohmann::json& launch, const nlohmann::json& payload) {
  launch["script"] = payload.value("script", "");
  nlohmann::json env = payload.value("environment", nlohmann::json::object());
  const nlohmann::json set_here = launch.value("env", nlohmann::json::object());
  for (const auto& [key, value] : set_here.items()) env[key] = value;
  launch["env"] = std::move(env);
}

}  // namespace drover::ctld
