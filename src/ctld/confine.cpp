#include "ctld/confine.hpp"

#include <algorithm>

namespace drover::ctld {

std::optional<proto::Confine> node_confine(const Config& config, const core::NodeAlloc& held,
                                           const core::Node* node) {
  if (!config.confine_set) return std::nullopt;
  proto::Confine c;
  c.cgroup = !config.proctrack_pgid;
  if (!config.task_cgroup || !c.cgroup) return c;
  const core::CgroupConf& cg = config.cgroup;
  if (cg.constrain_cores)
    for (uint16_t id : held.cpu_ids) c.cpus.push_back(id);
  const int64_t node_mem = node ? node->real_memory_mb : held.mem_mb;
  const core::MemoryLimits mem = core::memory_limits(cg, held.mem_mb, node_mem);
  c.mem_hard = mem.hard;
  c.mem_soft = mem.soft;
  c.memsw = mem.memsw;
  if (cg.constrain_swap && cg.swappiness) c.swappiness = static_cast<int64_t>(*cg.swappiness);
  c.constrain_devices = cg.constrain_devices;
  if (c.constrain_devices && !config.gres_conf.empty()) {
    // Every GPU file of the node but those the job holds (CUDA_VISIBLE_DEVICES' indices).
    const auto files = core::gres_gpu_files(config.gres_conf, held.node);
    for (size_t i = 0; i < files.size(); ++i)
      if (std::find(held.gpu_ids.begin(), held.gpu_ids.end(), i) == held.gpu_ids.end())
        c.deny_devices.push_back(files[i]);
  }
  return c;
}

}  // namespace drover::ctld
