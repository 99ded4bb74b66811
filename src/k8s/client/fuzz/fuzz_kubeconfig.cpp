// libFuzzer entry for kubeconfig files (YAML through libyaml, then the config rules): any
// input either gives a Config or a ConfigError, never a crash or another exception.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "k8s/client/config.hpp"
#include "k8s/client/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  try {
    drover::k8s::Config c = drover::k8s::parse_kubeconfig(text, "/base");
    if (c.server.empty()) std::abort();
  } catch (const drover::k8s::ConfigError&) {
  }
  return 0;
}
