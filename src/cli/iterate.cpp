#include "cli/iterate.hpp"

#include <poll.h>
#include <signal.h>
#include <time.h>

#include <cstdlib>
#include <ctime>
#include <iostream>

#include "cli/format.hpp"

namespace drover::cli {
namespace {

volatile sig_atomic_t g_interrupted = 0;

// The first SIGINT is noted and ends the loop at its next pause (a report is never cut short);
// a second one ends the process at once, as SIGINT does without the loop.
void on_sigint(int) {
  if (g_interrupted) {
    ::signal(SIGINT, SIG_DFL);
    ::raise(SIGINT);
  }
  g_interrupted = 1;
}

// Ends the process the way SIGINT ends Slurm's commands, after what was printed is out.
[[noreturn]] void die_of_sigint() {
  std::cout.flush();
  std::cerr.flush();
  ::signal(SIGINT, SIG_DFL);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  ::sigprocmask(SIG_UNBLOCK, &set, nullptr);
  ::raise(SIGINT);
  std::_Exit(128 + SIGINT);  // not reached: SIGINT with its default action ends the process
}

// Sleeps `seconds` or until SIGINT, whichever comes first; SIGINT is blocked outside the wait
// itself so that one arriving between the check and the sleep still ends the sleep at once.
bool pause_until_sigint(int seconds) {
  static bool installed = false;
  if (!installed) {
    // SIGINT ignored from the start (a background job of a script) stays ignored.
    struct sigaction old_action {};
    ::sigaction(SIGINT, nullptr, &old_action);
    if (old_action.sa_handler != SIG_IGN) {
      struct sigaction sa {};
      sa.sa_handler = on_sigint;
      sa.sa_flags = SA_RESTART;  // the report in progress carries on undisturbed
      sigemptyset(&sa.sa_mask);
      ::sigaction(SIGINT, &sa, nullptr);
    }
    installed = true;
  }
  sigset_t block, old;
  sigemptyset(&block);
  sigaddset(&block, SIGINT);
  ::sigprocmask(SIG_BLOCK, &block, &old);
  sigset_t during = old;
  sigdelset(&during, SIGINT);
  timespec end{};
  ::clock_gettime(CLOCK_MONOTONIC, &end);
  end.tv_sec += seconds;
  while (!g_interrupted) {
    timespec now{};
    ::clock_gettime(CLOCK_MONOTONIC, &now);
    timespec left{end.tv_sec - now.tv_sec, end.tv_nsec - now.tv_nsec};
    if (left.tv_nsec < 0) {
      left.tv_nsec += 1000000000L;
      --left.tv_sec;
    }
    if (left.tv_sec < 0) break;
    // ppoll with no descriptors: a sleep that SIGINT (unblocked only during it) interrupts.
    if (::ppoll(nullptr, 0, &left, &during) == 0) break;
  }
  ::sigprocmask(SIG_SETMASK, &old, nullptr);
  if (g_interrupted) die_of_sigint();
  return true;
}

}  // namespace

IterateIo system_iterate_io() {
  IterateIo io;
  io.now = [] { return static_cast<int64_t>(std::time(nullptr)); };
  io.write = [](const std::string& out, const std::string& err) {
    std::cerr << err << std::flush;
    std::cout << out << std::flush;
  };
  io.pause = pause_until_sigint;
  return io;
}

int run_reports(int seconds, bool dated, const std::function<CommandResult()>& report,
                const IterateIo& io) {
  for (;;) {
    // The date comes first: Slurm prints it before asking the controller.
    const std::string date =
        dated ? date_line(io.now ? io.now() : static_cast<int64_t>(std::time(nullptr))) + "\n"
              : std::string();
    const CommandResult r = report();
    io.write(date + r.out + (seconds > 0 ? "\n" : ""), r.err);
    if (seconds <= 0 || !io.pause(seconds)) return r.rc;
  }
}

int iterate_seconds(const std::string& value) {
  // As atoi: leading blanks and digits, and a value past an int wraps (2147483648 is refused).
  const int v = static_cast<int>(std::strtol(value.c_str(), nullptr, 10));
  return v > 0 ? v : 0;
}

}  // namespace drover::cli
