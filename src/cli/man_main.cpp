// drover-man DIR: writes each command's man page, DIR/man1/<command>.1, from the help text the
// command prints for --help (one source for both).
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>

#include "cli/help.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: drover-man DIR\n";
    return 2;
  }
  const std::filesystem::path dir = std::filesystem::path(argv[1]) / "man1";
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    std::cerr << "drover-man: " << dir.string() << ": " << ec.message() << '\n';
    return 1;
  }
  for (const drover::cli::CommandHelp* h : drover::cli::all_command_help()) {
    const auto path = dir / (std::string(h->name) + ".1");
    std::ofstream f(path, std::ios::trunc);
    f << drover::cli::man_page(*h);
    if (!f.flush()) {
      std::cerr << "drover-man: cannot write " << path.string() << '\n';
      return 1;
    }
  }
  return 0;
}
