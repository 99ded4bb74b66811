// droverctld: the controller.
#include <malloc.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "ctld/server.hpp"
#include "net/auth.hpp"

namespace {
int usage() {
  std::cerr << "usage: droverctld --conf FILE --state-dir DIR\n";
  return 2;
}
}  // namespace

int main(int argc, char** argv) {
  // Everything the controller creates (journal, accounting database and their -wal/-shm files,
  // key) holds users' scripts, environments and records: its own user's alone. The socket is
  // opened up explicitly (server.cpp).
  ::umask(077);
  // Buffers of a MiB and more (replies listing every job, and the frames that carry them) get
  // pages of their own that go back to the system when freed. By default glibc raises this
  // threshold to the size of the largest such buffer freed, and later ones then stay in the
  // heap after use: the controller kept tens of MB after a few `squeue`s of a deep queue.
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
  std::string conf_path, state_dir;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--conf" && i + 1 < argc)
      conf_path = argv[++i];
    else if (a == "--state-dir" && i + 1 < argc)
      state_dir = argv[++i];
    else
      return usage();
  }
  if (state_dir.empty()) return usage();
  if (conf_path.empty()) conf_path = state_dir + "/slurm.conf";
  conf_path = std::filesystem::absolute(conf_path).lexically_normal().string();
  spdlog::set_pattern("[%Y-%m-%dT%H:%M:%S.%e] [%l] %v");
  try {
    drover::ctld::Config config = drover::ctld::load_config_file(conf_path);
    for (const auto& w : config.conf.warnings) spdlog::warn("{}", w);
    auto accounts = drover::ctld::read_accounts_file(conf_path);
    config.state_dir = state_dir;
    std::string key = drover::net::load_or_create_key(state_dir + "/cluster.key");
    drover::ctld::Server server(std::move(config), state_dir, std::move(key), std::move(accounts));
    return server.run();
  } catch (const std::exception& e) {
    spdlog::critical("{}", e.what());
    return 1;
  }
}
