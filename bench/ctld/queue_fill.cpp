// Fills a live controller with pending jobs quickly: K connections submit in parallel through
// its Unix socket, as sbatch does (the caller's uid comes from the socket), so the controller
// batches them (one journal write per batch) instead of taking one sbatch process at a time.
// Not a timed test: a program that prints figures (docs/benchmarks.md, "Queue depth").
//
//   queue_fill SOCKET JOBS [CONNECTIONS=16] [PARTITION=hold] [NAME=fill]
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "core/job.hpp"
#include "net/unix_client.hpp"
#include "proto/json.hpp"

using namespace drover;
using Clock = std::chrono::steady_clock;

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: queue_fill SOCKET JOBS [CONNECTIONS] [PARTITION] [NAME]\n");
    return 2;
  }
  const std::string socket = argv[1];
  const long jobs = std::atol(argv[2]);
  const int conns = argc > 3 ? std::atoi(argv[3]) : 16;
  const std::string partition = argc > 4 ? argv[4] : "hold";
  const std::string name = argc > 5 ? argv[5] : "fill";

  // What `sbatch -p PARTITION -J NAME -o /dev/null --wrap true` sends, less the environment.
  core::JobSpec spec;
  spec.name = name;
  spec.partitions = {partition};
  spec.script = "#!/bin/sh\n# This script was created by sbatch --wrap.\n\ntrue\n";
  spec.workdir = "/tmp";
  spec.std_out = "/dev/null";
  spec.submit_host = "localhost";
  const std::string pid = std::to_string(::getpid());

  std::atomic<long> next{0}, failed{0};
  std::atomic<bool> stop{false};
  const auto t0 = Clock::now();
  std::vector<std::thread> threads;
  for (int c = 0; c < conns; ++c)
    threads.emplace_back([&] {
      while (!stop) {
        const long i = next++;
        if (i >= jobs) break;
        nlohmann::json req = {{"op", "submit"},
                              {"spec", spec},
                              {"test_only", false},
                              {"request_id", "fill-" + pid + "-" + std::to_string(i)}};
        try {
          net::UnixClient client;
          client.connect(socket);
          const auto reply = nlohmann::json::parse(client.call(req.dump()));
          if (!reply.value("ok", false)) {
            if (failed++ == 0) std::fprintf(stderr, "queue_fill: %s\n", reply.dump().c_str());
            stop = true;
          }
        } catch (const std::exception& e) {
          if (failed++ == 0) std::fprintf(stderr, "queue_fill: %s\n", e.what());
          stop = true;
        }
        if (i > 0 && i % 100000 == 0) {
          const double s = std::chrono::duration<double>(Clock::now() - t0).count();
          std::fprintf(stderr, "queue_fill: %ld submitted, %.0f/s\n", i, i / s);
        }
      }
    });
  for (auto& t : threads) t.join();
  const double s = std::chrono::duration<double>(Clock::now() - t0).count();
  const long done = std::min(next.load(), jobs) - failed.load();
  std::printf("submitted %ld jobs in %.1f s (%.0f/s, %d connections), %ld failed\n", done, s,
              done / s, conns, failed.load());
  return failed.load() == 0 ? 0 : 1;
}
