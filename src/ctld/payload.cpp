#include "ctld/payload.hpp"

namespace drover::ctld {

void complete_launch(proto::Launch& launch, const nlohmann::json& payload) {
  launch.script = payload.value("script", "");
  std::map<std::string, std::string> env;
  if (auto it = payload.find("environment"); it != payload.end() && it->is_object())
    for (const auto& [key, value] : it->items())
      if (value.is_string()) env[key] = value.get<std::string>();
  for (auto& [key, value] : launch.env) env[key] = std::move(value);
  launch.env = std::move(env);
}

}  // namespace drover::ctld
