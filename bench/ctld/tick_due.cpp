// How long finding the pending jobs whose --begin came or --deadline passed takes with a
// million pending: the walk a full pass did, against JobTable::take_due(). Prints figures.
//   build/bin/tick_due
#include <chrono>
#include <cstdio>

#include "ctld/job_table.hpp"
using namespace drover;
int main() {
  ctld::JobTable t;
  const int n = 1000000;
  for (int i = 1; i <= n; ++i) {
    core::Job j;
    j.id = i;
    j.payload_id = i;
    j.eligible_time = 1000;  // eligible long ago, as a queue's jobs are
    if (i % 1000 == 0) j.eligible_time = 5000 + i / 1000;  // a thousand with a later --begin
    if (i % 997 == 0) j.spec.deadline = 9000 + i / 997;    // and about a thousand deadlines
    t.insert(std::move(j));
  }
  t.take_due(5000);  // the first tick after load
  using C = std::chrono::steady_clock;
  auto t0 = C::now();
  size_t found = 0;
  for (int k = 0; k < 10; ++k) {  // the walk a full pass did to find them
    for (const auto& [id, job] : t)
      if (job.state == core::JobState::Pending &&
          ((job.eligible_time > 5000 + k && job.eligible_time <= 5001 + k) ||
           (job.spec.deadline != 0 && job.spec.deadline <= 5001 + k)))
        ++found;
  }
  auto t1 = C::now();
  size_t due = 0;
  for (int k = 0; k < 10; ++k) {
    auto d = t.take_due(5001 + k);
    due += d.begun.size() + d.expired.size();
  }
  auto t2 = C::now();
  std::printf("walk of %d pending: %.3f ms a tick (%zu); take_due: %.4f ms a tick (%zu)\n", n,
              std::chrono::duration<double, std::milli>(t1 - t0).count() / 10, found,
              std::chrono::duration<double, std::milli>(t2 - t1).count() / 10, due);
}
