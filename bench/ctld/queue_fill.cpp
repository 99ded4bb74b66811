// Fills a live controller with pending jobs quickly: K connections submit in parallel through
// its Unix socket, as sbatch does (the caller's uid comes from the socket), so the controller
// batches them (one journal write per batch) instead of taking one sbatch process at a time.
// Each submission is a record of its own (no arrays). Not a timed test: a program that prints
// figures (docs/benchmarks.md, "Queue depth").
//
//   queue_fill SOCKET JOBS [CONNECTIONS=16] [PARTITION=hold] [NAME=fill]
//
// With CTLD_PID set, it also prints, every REPORT_EVERY jobs (default 50,000), the rate over
// that stretch and the controller's RSS and CPU time (/proc), so one run gives the submission
// rate as a function of queue depth (DEPTH_BASE: jobs queued before it started).
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/job.hpp"
#include "net/unix_client.hpp"
#include "proto/json.hpp"

using namespace drover;
using Clock = std::chrono::steady_clock;

namespace {

long rss_kib(long pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::atol(line.c_str() + 6);
  return -1;
}

// utime + stime in seconds.
double cpu_s(long pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const size_t close = text.rfind(')');
  if (close == std::string::npos) return -1;
  std::istringstream rest(text.substr(close + 2));
  std::string field;
  unsigned long long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i == 14) utime = std::stoull(field);
    if (i == 15) stime = std::stoull(field);
  }
  return static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

}  // namespace

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
  const long ctld_pid = std::getenv("CTLD_PID") ? std::atol(std::getenv("CTLD_PID")) : 0;
  const long every = std::getenv("REPORT_EVERY") ? std::atol(std::getenv("REPORT_EVERY")) : 50000;
  // Jobs already queued: depths are printed counting them.
  const long base = std::getenv("DEPTH_BASE") ? std::atol(std::getenv("DEPTH_BASE")) : 0;

  // What `sbatch -p PARTITION -J NAME -o /dev/null --wrap true` sends, less the environment.
  core::JobSpec spec;
  spec.name = name;
  spec.partitions = {partition};
  spec.script = "#!/bin/sh\n# This script was created by sbatch --wrap.\n\ntrue\n";
  spec.workdir = "/tmp";
  spec.std_out = "/dev/null";
  spec.submit_host = "localhost";
  const std::string pid = std::to_string(::getpid());

  std::atomic<long> next{0}, done_count{0}, failed{0};
  std::atomic<bool> stop{false};
  const auto t0 = Clock::now();
  std::mutex report_mu;
  auto last_at = t0;
  long last_done = 0;
  double last_cpu = ctld_pid ? cpu_s(ctld_pid) : 0;
  if (ctld_pid)
    std::printf("depth\tinterval_rate/s\tcumulative_rate/s\tctld_rss_kib\tctld_cpu_s_interval\n");
  auto report = [&](long done) {
    std::lock_guard lock(report_mu);
    const auto now = Clock::now();
    const double s = std::chrono::duration<double>(now - last_at).count();
    const double all = std::chrono::duration<double>(now - t0).count();
    const double rate = s > 0 ? (done - last_done) / s : 0;
    if (ctld_pid) {
      const double cpu = cpu_s(ctld_pid);
      std::printf("%ld\t%.0f\t%.0f\t%ld\t%.1f\n", base + done, rate, done / all, rss_kib(ctld_pid),
                  cpu - last_cpu);
      std::fflush(stdout);
      last_cpu = cpu;
    } else {
      std::fprintf(stderr, "queue_fill: %ld submitted, %.0f/s (last %ld: %.0f/s)\n", done,
                   done / all, done - last_done, rate);
    }
    last_at = now;
    last_done = done;
  };
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
          net::UnixClient client;  // one connection a submission, as sbatch
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
        if (const long d = ++done_count; d % every == 0) report(d);
      }
    });
  for (auto& t : threads) t.join();
  const double s = std::chrono::duration<double>(Clock::now() - t0).count();
  const long done = done_count.load() - failed.load();
  std::printf("submitted %ld jobs in %.1f s (%.0f/s, %d connections), %ld failed\n", done, s,
              done / s, conns, failed.load());
  return failed.load() == 0 ? 0 : 1;
}
