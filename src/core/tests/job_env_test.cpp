#include "core/job_env.hpp"

#include <gtest/gtest.h>

#include <sstream>

#include "core/export_env.hpp"

using namespace drover::core;
using Env = std::map<std::string, std::string>;

// The expected environments below are what real Slurm 22.05's batch shell printed (`env | sort`)
// on a private 3-node cluster (node1..node3, 2 CPUs and 1000 MB each, partition debug,
// ClusterName=oracle, controller on host "vm" port 32470, no accounting), submitted as root
// from /tmp/x with `sbatch <options> --wrap 'env | sort > ...'` under `env -i` and the
// environment in run_sh_env(). Left out: PWD (set by the shell) and SLURM_TASK_PID (the agent
// sets it).

namespace {

Env parse_env(const char* text) {
  Env env;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (auto eq = line.find('='); eq != std::string::npos)
      env.emplace(line.substr(0, eq), line.substr(eq + 1));
  }
  return env;
}

Env run_sh_env() {
  return {{"HOME", "/root"},
          {"PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
          {"SLURM_CONF", "/tmp/oracle-env/slurm.conf"},
          {"FOO", "bar"},
          {"USER", "root"},
          {"LOGNAME", "root"},
          {"SHELL", "/bin/bash"}};
}

const BatchEnvSite kSite{"vm", 32470};

Job oracle_job(uint64_t id, std::vector<NodeAlloc> alloc) {
  Job job;
  job.id = id;
  job.spec.name = "wrap";
  job.spec.workdir = "/tmp/x";
  job.spec.submit_host = "vm";
  job.spec.environment = run_sh_env();
  job.partition = "debug";
  job.user = "root";
  job.alloc = std::move(alloc);
  job.batch_host = job.alloc.front().node;
  return job;
}

Env env_of(const Job& job) { return batch_environment(job, "oracle", kSite); }

// What `job`'s environment has beyond (or instead of) the default job's, with the per-job
// values (ids, nodes) masked out by comparing key by key.
Env added(const Env& got, const Env& base) {
  Env out;
  for (const auto& [k, v] : got)
    if (!base.count(k)) out[k] = v;
  return out;
}

}  // namespace

TEST(BatchEnv, DefaultJob) {
  // sbatch --wrap ... (job 1 on node1)
  const Env want = parse_env(R"(
ENVIRONMENT=BATCH
FOO=bar
HOME=/root
HOSTNAME=node1
LOGNAME=root
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
SHELL=/bin/bash
SLURMD_NODENAME=node1
SLURM_CLUSTER_NAME=oracle
SLURM_CONF=/tmp/oracle-env/slurm.conf
SLURM_CPUS_ON_NODE=1
SLURM_GTIDS=0
SLURM_JOBID=1
SLURM_JOB_CPUS_PER_NODE=1
SLURM_JOB_GID=0
SLURM_JOB_ID=1
SLURM_JOB_NAME=wrap
SLURM_JOB_NODELIST=node1
SLURM_JOB_NUM_NODES=1
SLURM_JOB_PARTITION=debug
SLURM_JOB_UID=0
SLURM_JOB_USER=root
SLURM_LOCALID=0
SLURM_NNODES=1
SLURM_NODEID=0
SLURM_NODELIST=node1
SLURM_NODE_ALIASES=(null)
SLURM_PRIO_PROCESS=0
SLURM_PROCID=0
SLURM_SUBMIT_DIR=/tmp/x
SLURM_SUBMIT_HOST=vm
SLURM_TASKS_PER_NODE=1
SLURM_TOPOLOGY_ADDR=node1
SLURM_TOPOLOGY_ADDR_PATTERN=node
SLURM_WORKING_CLUSTER=oracle:vm:32470:9728:109
TMPDIR=/tmp
USER=root
)");
  EXPECT_EQ(env_of(oracle_job(1, {{"node1", 1, 0, 1}})), want);
}

TEST(BatchEnv, TwoNodesThreeTasks) {
  // sbatch -N2 -n3 (job 3): SLURM_JOB_CPUS_PER_NODE=2,1, SLURM_TASKS_PER_NODE=2,1.
  Job job = oracle_job(3, {{"node1", 2, 0, 2}, {"node2", 1, 0, 1}});
  job.spec.nodes_min = job.spec.nodes_max = 2;
  job.spec.nodes_set = true;
  job.spec.ntasks = 3;
  job.spec.ntasks_set = true;
  EXPECT_EQ(env_of(job), parse_env(R"(
ENVIRONMENT=BATCH
FOO=bar
HOME=/root
HOSTNAME=node1
LOGNAME=root
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
SHELL=/bin/bash
SLURMD_NODENAME=node1
SLURM_CLUSTER_NAME=oracle
SLURM_CONF=/tmp/oracle-env/slurm.conf
SLURM_CPUS_ON_NODE=2
SLURM_GTIDS=0
SLURM_JOBID=3
SLURM_JOB_CPUS_PER_NODE=2,1
SLURM_JOB_GID=0
SLURM_JOB_ID=3
SLURM_JOB_NAME=wrap
SLURM_JOB_NODELIST=node[1-2]
SLURM_JOB_NUM_NODES=2
SLURM_JOB_PARTITION=debug
SLURM_JOB_UID=0
SLURM_JOB_USER=root
SLURM_LOCALID=0
SLURM_NNODES=2
SLURM_NODEID=0
SLURM_NODELIST=node[1-2]
SLURM_NODE_ALIASES=(null)
SLURM_NPROCS=3
SLURM_NTASKS=3
SLURM_PRIO_PROCESS=0
SLURM_PROCID=0
SLURM_SUBMIT_DIR=/tmp/x
SLURM_SUBMIT_HOST=vm
SLURM_TASKS_PER_NODE=2,1
SLURM_TOPOLOGY_ADDR=node1
SLURM_TOPOLOGY_ADDR_PATTERN=node
SLURM_WORKING_CLUSTER=oracle:vm:32470:9728:109
TMPDIR=/tmp
USER=root
)"));
}

TEST(BatchEnv, ThreeTasksTwoCpusEach) {
  // sbatch -n3 -c2 (job 4): 2(x3) CPUs, 1(x3) tasks, SLURM_CPUS_PER_TASK=2.
  Job job = oracle_job(4, {{"node1", 2, 0, 1}, {"node2", 2, 0, 1}, {"node3", 2, 0, 1}});
  job.spec.ntasks = 3;
  job.spec.ntasks_set = true;
  job.spec.cpus_per_task = 2;
  job.spec.cpus_per_task_set = true;
  EXPECT_EQ(env_of(job), parse_env(R"(
ENVIRONMENT=BATCH
FOO=bar
HOME=/root
HOSTNAME=node1
LOGNAME=root
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
SHELL=/bin/bash
SLURMD_NODENAME=node1
SLURM_CLUSTER_NAME=oracle
SLURM_CONF=/tmp/oracle-env/slurm.conf
SLURM_CPUS_ON_NODE=2
SLURM_CPUS_PER_TASK=2
SLURM_GTIDS=0
SLURM_JOBID=4
SLURM_JOB_CPUS_PER_NODE=2(x3)
SLURM_JOB_GID=0
SLURM_JOB_ID=4
SLURM_JOB_NAME=wrap
SLURM_JOB_NODELIST=node[1-3]
SLURM_JOB_NUM_NODES=3
SLURM_JOB_PARTITION=debug
SLURM_JOB_UID=0
SLURM_JOB_USER=root
SLURM_LOCALID=0
SLURM_NNODES=3
SLURM_NODEID=0
SLURM_NODELIST=node[1-3]
SLURM_NODE_ALIASES=(null)
SLURM_NPROCS=3
SLURM_NTASKS=3
SLURM_PRIO_PROCESS=0
SLURM_PROCID=0
SLURM_SUBMIT_DIR=/tmp/x
SLURM_SUBMIT_HOST=vm
SLURM_TASKS_PER_NODE=1(x3)
SLURM_TOPOLOGY_ADDR=node1
SLURM_TOPOLOGY_ADDR_PATTERN=node
SLURM_WORKING_CLUSTER=oracle:vm:32470:9728:109
TMPDIR=/tmp
USER=root
)"));
}

TEST(BatchEnv, TasksPerNodeOnly) {
  // sbatch -N2 --ntasks-per-node=2 (job 7): SLURM_NTASKS=4 although -n was not given.
  Job job = oracle_job(7, {{"node1", 2, 0, 2}, {"node2", 2, 0, 2}});
  job.spec.nodes_min = job.spec.nodes_max = 2;
  job.spec.nodes_set = true;
  job.spec.ntasks_per_node = 2;
  EXPECT_EQ(env_of(job), parse_env(R"(
ENVIRONMENT=BATCH
FOO=bar
HOME=/root
HOSTNAME=node1
LOGNAME=root
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
SHELL=/bin/bash
SLURMD_NODENAME=node1
SLURM_CLUSTER_NAME=oracle
SLURM_CONF=/tmp/oracle-env/slurm.conf
SLURM_CPUS_ON_NODE=2
SLURM_GTIDS=0
SLURM_JOBID=7
SLURM_JOB_CPUS_PER_NODE=2(x2)
SLURM_JOB_GID=0
SLURM_JOB_ID=7
SLURM_JOB_NAME=wrap
SLURM_JOB_NODELIST=node[1-2]
SLURM_JOB_NUM_NODES=2
SLURM_JOB_PARTITION=debug
SLURM_JOB_UID=0
SLURM_JOB_USER=root
SLURM_LOCALID=0
SLURM_NNODES=2
SLURM_NODEID=0
SLURM_NODELIST=node[1-2]
SLURM_NODE_ALIASES=(null)
SLURM_NPROCS=4
SLURM_NTASKS=4
SLURM_NTASKS_PER_NODE=2
SLURM_PRIO_PROCESS=0
SLURM_PROCID=0
SLURM_SUBMIT_DIR=/tmp/x
SLURM_SUBMIT_HOST=vm
SLURM_TASKS_PER_NODE=2(x2)
SLURM_TOPOLOGY_ADDR=node1
SLURM_TOPOLOGY_ADDR_PATTERN=node
SLURM_WORKING_CLUSTER=oracle:vm:32470:9728:109
TMPDIR=/tmp
USER=root
)"));
  // sbatch --ntasks-per-node=2 (job 8, one node): SLURM_NTASKS=2.
  Job one = oracle_job(8, {{"node3", 2, 0, 2}});
  one.spec.ntasks_per_node = 2;
  Env env = env_of(one);
  EXPECT_EQ(env["SLURM_NTASKS"], "2");
  EXPECT_EQ(env["SLURM_NPROCS"], "2");
  EXPECT_EQ(env["SLURM_NTASKS_PER_NODE"], "2");
  EXPECT_EQ(env["SLURM_TASKS_PER_NODE"], "2");
}

TEST(BatchEnv, VariablesSetOnlyWhenAsked) {
  const Env base = env_of(oracle_job(1, {{"node1", 1, 0, 1}}));
  // -N1, -N2, -p debug, --comment, -t 10, -q myqos, --hold, --nice=10, --mem=0,
  // --mem-per-cpu=0: nothing added (no SLURM_NTASKS with -N alone; no SLURM_JOB_QOS,
  // SLURM_JOB_COMMENT or time variables in 22.05 without accounting).
  Job quiet = oracle_job(1, {{"node1", 1, 0, 1}});
  quiet.spec.nodes_set = true;
  quiet.spec.comment = "hello world";
  quiet.spec.qos = "myqos";
  quiet.spec.time_limit_min = 10;
  quiet.time_limit_min = 10;
  quiet.spec.hold = true;
  quiet.spec.nice = 10;
  quiet.spec.mem_per_node_mb = 0;
  quiet.spec.partitions = {"debug"};
  EXPECT_EQ(env_of(quiet), base);
  Job mpc0 = oracle_job(1, {{"node1", 1, 0, 1}});
  mpc0.spec.mem_per_cpu_mb = 0;
  EXPECT_EQ(env_of(mpc0), base);

  // -n1 (job 16): SLURM_NTASKS=1 and SLURM_NPROCS=1.
  Job n1 = oracle_job(1, {{"node1", 1, 0, 1}});
  n1.spec.ntasks_set = true;
  EXPECT_EQ(added(env_of(n1), base), (Env{{"SLURM_NPROCS", "1"}, {"SLURM_NTASKS", "1"}}));
  // --mem=100 (job 5): SLURM_MEM_PER_NODE=100.
  Job mem = oracle_job(1, {{"node1", 1, 100, 1}});
  mem.spec.mem_per_node_mb = 100;
  EXPECT_EQ(added(env_of(mem), base), (Env{{"SLURM_MEM_PER_NODE", "100"}}));
  // --mem-per-cpu=100 (job 6): SLURM_MEM_PER_CPU=100.
  Job mpc = oracle_job(1, {{"node1", 1, 100, 1}});
  mpc.spec.mem_per_cpu_mb = 100;
  EXPECT_EQ(added(env_of(mpc), base), (Env{{"SLURM_MEM_PER_CPU", "100"}}));
  // -c2 (job 15): SLURM_CPUS_PER_TASK=2, one task on the node's 2 CPUs.
  Job c2 = oracle_job(1, {{"node1", 2, 0, 1}});
  c2.spec.cpus_per_task = 2;
  c2.spec.cpus_per_task_set = true;
  Env env = env_of(c2);
  EXPECT_EQ(added(env, base), (Env{{"SLURM_CPUS_PER_TASK", "2"}}));
  EXPECT_EQ(env["SLURM_JOB_CPUS_PER_NODE"], "2");
  EXPECT_EQ(env["SLURM_TASKS_PER_NODE"], "1");
  EXPECT_EQ(env["SLURM_CPUS_ON_NODE"], "2");
  // -A myacct (job 20): SLURM_JOB_ACCOUNT=myacct.
  Job acct = oracle_job(1, {{"node1", 1, 0, 1}});
  acct.spec.account = "myacct";
  EXPECT_EQ(added(env_of(acct), base), (Env{{"SLURM_JOB_ACCOUNT", "myacct"}}));
  // -J myname (job 9): SLURM_JOB_NAME=myname.
  Job named = oracle_job(1, {{"node1", 1, 0, 1}});
  named.spec.name = "myname";
  EXPECT_EQ(env_of(named)["SLURM_JOB_NAME"], "myname");
  // --open-mode=append (job 13) / truncate (job 158): SLURM_OPEN_MODE=a / t.
  Job om = oracle_job(1, {{"node1", 1, 0, 1}});
  om.spec.open_mode = "append";
  EXPECT_EQ(added(env_of(om), base), (Env{{"SLURM_OPEN_MODE", "a"}}));
  om.spec.open_mode = "truncate";
  EXPECT_EQ(added(env_of(om), base), (Env{{"SLURM_OPEN_MODE", "t"}}));
  // -d as written: singleton (28), 152 (153), afterany:152 (154), afterok:152?afterany:152
  // (155), afterok:1 on a finished job (156).
  for (const char* dep : {"singleton", "152", "afterany:152", "afterok:152?afterany:152"}) {
    Job d = oracle_job(1, {{"node1", 1, 0, 1}});
    d.spec.dependency = dep;
    EXPECT_EQ(added(env_of(d), base), (Env{{"SLURM_JOB_DEPENDENCY", dep}}));
  }
}

// GPUs, as Slurm 22.05 (select/cons_tres, gres.conf without cgroups) printed them on the
// oracle (4 nodes of 4 CPUs and two GPUs): the batch node's GPU indices and the options given.
TEST(BatchEnv, Gpus) {
  auto gpu_alloc = [](const std::string& node, std::vector<uint16_t> ids) {
    NodeAlloc a(node, 1, 100, 1, {{"gpu", "", static_cast<int64_t>(ids.size())}});
    a.gpu_ids = std::move(ids);
    return a;
  };
  const Env base = env_of(oracle_job(1, {{"node1", 1, 100, 1}}));
  // -N1 --gpus-per-node=1 --mem-per-gpu=100
  Job gpn = oracle_job(1, {gpu_alloc("node1", {0})});
  gpn.spec.gpus_per_node = "1";
  gpn.spec.mem_per_gpu_mb = 100;
  EXPECT_EQ(added(env_of(gpn), base), (Env{{"CUDA_VISIBLE_DEVICES", "0"},
                                           {"GPU_DEVICE_ORDINAL", "0"},
                                           {"SLURM_GPUS_ON_NODE", "1"},
                                           {"SLURM_GPUS_PER_NODE", "1"},
                                           {"SLURM_JOB_GPUS", "0"},
                                           {"SLURM_MEM_PER_GPU", "100"}}));
  // -n2 --gpus-per-task=1 (both tasks on one node)
  Job gpt = oracle_job(1, {gpu_alloc("node1", {0, 1})});
  gpt.spec.gpus_per_task = "1";
  EXPECT_EQ(added(env_of(gpt), base), (Env{{"CUDA_VISIBLE_DEVICES", "0,1"},
                                           {"GPU_DEVICE_ORDINAL", "0,1"},
                                           {"SLURM_GPUS_ON_NODE", "2"},
                                           {"SLURM_GPUS_PER_TASK", "1"},
                                           {"SLURM_JOB_GPUS", "0,1"}}));
  // --gres=gpu:1 (the second GPU): no option variable.
  Job gres = oracle_job(1, {gpu_alloc("node1", {1})});
  gres.spec.gres = "gpu:1";
  EXPECT_EQ(added(env_of(gres), base), (Env{{"CUDA_VISIBLE_DEVICES", "1"},
                                            {"GPU_DEVICE_ORDINAL", "1"},
                                            {"SLURM_GPUS_ON_NODE", "1"},
                                            {"SLURM_JOB_GPUS", "1"}}));
  // -n5 --gpus=1: the batch node got none of them (the second node has the GPU).
  Job none = oracle_job(1, {{"node1", 1, 100, 1}, gpu_alloc("node2", {0})});
  none.spec.gpus = "1";
  Env env = env_of(none);
  EXPECT_EQ(env.count("CUDA_VISIBLE_DEVICES"), 0u);
  EXPECT_EQ(env["SLURM_GPUS"], "1");
}

TEST(BatchEnv, TaskLayout) {
  // --exclusive (job 19): 2 CPUs, SLURM_TASKS_PER_NODE=2 (CPUs / cpus-per-task without -n).
  Job excl = oracle_job(19, {{"node3", 2, 0, 1}});
  excl.spec.exclusive = true;
  Env env = env_of(excl);
  EXPECT_EQ(env["SLURM_JOB_CPUS_PER_NODE"], "2");
  EXPECT_EQ(env["SLURM_TASKS_PER_NODE"], "2");
  EXPECT_EQ(env.count("SLURM_NTASKS"), 0u);
  // -N2 --exclusive (162): 2(x2) / 2(x2).
  Job xn2 = oracle_job(162, {{"node1", 2, 0, 1}, {"node2", 2, 0, 1}});
  xn2.spec.exclusive = xn2.spec.nodes_set = true;
  EXPECT_EQ(env_of(xn2)["SLURM_TASKS_PER_NODE"], "2(x2)");
  // -N2 -c2 (159): 2(x2) CPUs, 1(x2) tasks.
  Job cn2 = oracle_job(159, {{"node1", 2, 0, 1}, {"node2", 2, 0, 1}});
  cn2.spec.nodes_set = cn2.spec.cpus_per_task_set = true;
  cn2.spec.cpus_per_task = 2;
  EXPECT_EQ(env_of(cn2)["SLURM_TASKS_PER_NODE"], "1(x2)");
  // With -n: one per node first, then node by node up to CPUs / cpus-per-task.
  // -N2 -n2 --exclusive (171): 1(x2); -N3 -n4 --exclusive (172): 2,1(x2);
  // -N2 -n3 --exclusive (161): 2,1; -N3 -n5 (176): CPUs 2(x2),1, tasks 2(x2),1.
  auto layout = [](std::vector<int> cpus, int ntasks, int cpt = 1) {
    Job j;
    for (size_t i = 0; i < cpus.size(); ++i)
      j.alloc.push_back({"node" + std::to_string(i + 1), cpus[i], 0, 0});
    j.spec.ntasks = ntasks;
    j.spec.ntasks_set = true;
    j.spec.cpus_per_task = cpt;
    return compress_counts(batch_tasks_per_node(j));
  };
  EXPECT_EQ(layout({2, 2}, 2), "1(x2)");
  EXPECT_EQ(layout({2, 2, 2}, 4), "2,1(x2)");
  EXPECT_EQ(layout({2, 2}, 3), "2,1");
  EXPECT_EQ(layout({2, 2, 1}, 5), "2(x2),1");
  // Overcommit: -N2 -n4 -O (174): CPUs 1(x2), tasks 2(x2); -N2 -n3 -c2 -O (175): 2,1.
  EXPECT_EQ(layout({1, 1}, 4), "2(x2)");
  EXPECT_EQ(layout({2, 2}, 3, 2), "2,1");
  // --ntasks-per-node wins over -n for the layout: -N2 -n3 --ntasks-per-node=2 (163) has
  // SLURM_NTASKS=3 but SLURM_TASKS_PER_NODE=2(x2); -n2 --ntasks-per-node=1 --exclusive (170):
  // CPUs 2(x2), tasks 1(x2).
  Job tpn = oracle_job(163, {{"node1", 2, 0, 2}, {"node2", 2, 0, 2}});
  tpn.spec.nodes_set = tpn.spec.ntasks_set = true;
  tpn.spec.ntasks = 3;
  tpn.spec.ntasks_per_node = 2;
  env = env_of(tpn);
  EXPECT_EQ(env["SLURM_NTASKS"], "3");
  EXPECT_EQ(env["SLURM_NTASKS_PER_NODE"], "2");
  EXPECT_EQ(env["SLURM_TASKS_PER_NODE"], "2(x2)");
  Job tpn1 = oracle_job(170, {{"node1", 2, 0, 1}, {"node2", 2, 0, 1}});
  tpn1.spec.ntasks_set = tpn1.spec.exclusive = true;
  tpn1.spec.ntasks = 2;
  tpn1.spec.ntasks_per_node = 1;
  env = env_of(tpn1);
  EXPECT_EQ(env["SLURM_JOB_CPUS_PER_NODE"], "2(x2)");
  EXPECT_EQ(env["SLURM_TASKS_PER_NODE"], "1(x2)");
  EXPECT_EQ(env["SLURM_NTASKS"], "2");
}

TEST(BatchEnv, ArrayTask) {
  // sbatch --array=0-15:4%2 under `env -i PATH=/usr/bin:/bin SLURM_CONF=... HOME=/root`:
  // array job 69, task 0 ran as job 73 on node2.
  Job job = oracle_job(73, {{"node2", 1, 0, 1}});
  job.spec.environment = {
      {"PATH", "/usr/bin:/bin"}, {"SLURM_CONF", "/tmp/oracle-env/slurm.conf"}, {"HOME", "/root"}};
  job.spec.array = "0-15:4%2";
  job.array_job_id = 69;
  job.array_task_id = 0;
  EXPECT_EQ(env_of(job), parse_env(R"(
ENVIRONMENT=BATCH
HOME=/root
HOSTNAME=node2
PATH=/usr/bin:/bin
SLURMD_NODENAME=node2
SLURM_ARRAY_JOB_ID=69
SLURM_ARRAY_TASK_COUNT=4
SLURM_ARRAY_TASK_ID=0
SLURM_ARRAY_TASK_MAX=12
SLURM_ARRAY_TASK_MIN=0
SLURM_ARRAY_TASK_STEP=4
SLURM_CLUSTER_NAME=oracle
SLURM_CONF=/tmp/oracle-env/slurm.conf
SLURM_CPUS_ON_NODE=1
SLURM_GTIDS=0
SLURM_JOBID=73
SLURM_JOB_CPUS_PER_NODE=1
SLURM_JOB_GID=0
SLURM_JOB_ID=73
SLURM_JOB_NAME=wrap
SLURM_JOB_NODELIST=node2
SLURM_JOB_NUM_NODES=1
SLURM_JOB_PARTITION=debug
SLURM_JOB_UID=0
SLURM_JOB_USER=root
SLURM_LOCALID=0
SLURM_NNODES=1
SLURM_NODEID=0
SLURM_NODELIST=node2
SLURM_NODE_ALIASES=(null)
SLURM_PRIO_PROCESS=0
SLURM_PROCID=0
SLURM_SUBMIT_DIR=/tmp/x
SLURM_SUBMIT_HOST=vm
SLURM_TASKS_PER_NODE=1
SLURM_TOPOLOGY_ADDR=node2
SLURM_TOPOLOGY_ADDR_PATTERN=node
SLURM_WORKING_CLUSTER=oracle:vm:32470:9728:109
TMPDIR=/tmp
)"));
  // The last task keeps the array's own id: task 12 ran as job 69.
  job.id = 69;
  job.array_task_id = 12;
  Env env = env_of(job);
  EXPECT_EQ(env["SLURM_JOB_ID"], "69");
  EXPECT_EQ(env["SLURM_ARRAY_JOB_ID"], "69");
  EXPECT_EQ(env["SLURM_ARRAY_TASK_ID"], "12");
}

TEST(BatchEnv, ArrayCountsAndStep) {
  // COUNT/MIN/MAX from the index set; STEP is the number after the first ':' of the spec, 1
  // without one. Each row: spec -> COUNT MIN MAX STEP as Slurm 22.05 printed them.
  struct Row {
    const char* spec;
    const char* count;
    const char* min;
    const char* max;
    const char* step;
  };
  for (const Row& r : {Row{"1,3,10", "3", "1", "10", "1"}, Row{"5", "1", "5", "5", "1"},
                       Row{"2-8:3,20", "4", "2", "20", "3"}, Row{"1,3,5", "3", "1", "5", "1"},
                       Row{"0-4:2,5-9:3", "5", "0", "8", "2"}, Row{"1,4-10:2", "5", "1", "10", "2"},
                       Row{"0-10:5", "3", "0", "10", "5"}, Row{"3,1", "2", "1", "3", "1"},
                       Row{"7-9,1", "4", "1", "9", "1"}, Row{"0-6:3,9", "4", "0", "9", "3"},
                       Row{"0-3,10-20:5", "7", "0", "20", "5"}}) {
    Job job = oracle_job(100, {{"node1", 1, 0, 1}});
    job.spec.array = r.spec;
    job.array_job_id = 90;
    job.array_task_id = 1;
    Env env = env_of(job);
    EXPECT_EQ(env["SLURM_ARRAY_TASK_COUNT"], r.count) << r.spec;
    EXPECT_EQ(env["SLURM_ARRAY_TASK_MIN"], r.min) << r.spec;
    EXPECT_EQ(env["SLURM_ARRAY_TASK_MAX"], r.max) << r.spec;
    EXPECT_EQ(env["SLURM_ARRAY_TASK_STEP"], r.step) << r.spec;
  }
  // Not an array: no SLURM_ARRAY_* at all.
  Env plain = env_of(oracle_job(1, {{"node1", 1, 0, 1}}));
  for (const auto& [k, v] : plain) EXPECT_FALSE(k.starts_with("SLURM_ARRAY_")) << k;
}

TEST(BatchEnv, ExportNoneWithLoginEnvironment) {
  // sbatch --export=NONE (job 34 on node2) with the submit environment of run_sh_env() plus
  // SLURM_FOO=sf SBATCH_BAR=sb SLURMD_X=1 SALLOC_Y=1 SRUN_Z=1 MYVAR=mv. The node added root's
  // login environment (`su - root -c env`), which is given here as the agent would read it.
  Env submit = run_sh_env();
  submit.insert({{"SLURM_FOO", "sf"},
                 {"SBATCH_BAR", "sb"},
                 {"SLURMD_X", "1"},
                 {"SALLOC_Y", "1"},
                 {"SRUN_Z", "1"},
                 {"MYVAR", "mv"}});
  const Env want = parse_env(R"(
ENVIRONMENT=BATCH
HOME=/root
HOSTNAME=node2
LOGNAME=root
MAIL=/var/mail/root
PATH=/usr/local/go/bin:/root/go/bin:/root/.cargo/bin:/root/.cargo/bin:/root/.pyenv/plugins/pyenv-virtualenv/shims:/root/.pyenv/shims:/root/.pyenv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
PYENV_ROOT=/root/.pyenv
PYENV_SHELL=bash
PYENV_VIRTUALENV_INIT=1
SHELL=/bin/bash
SHLVL=1
SLURMD_NODENAME=node2
SLURMD_X=1
SLURM_CLUSTER_NAME=oracle
SLURM_CONF=/tmp/oracle-env/slurm.conf
SLURM_CPUS_ON_NODE=1
SLURM_EXPORT_ENV=NONE
SLURM_FOO=sf
SLURM_GET_USER_ENV=1
SLURM_GTIDS=0
SLURM_JOBID=34
SLURM_JOB_CPUS_PER_NODE=1
SLURM_JOB_GID=0
SLURM_JOB_ID=34
SLURM_JOB_NAME=wrap
SLURM_JOB_NODELIST=node2
SLURM_JOB_NUM_NODES=1
SLURM_JOB_PARTITION=debug
SLURM_JOB_UID=0
SLURM_JOB_USER=root
SLURM_LOCALID=0
SLURM_NNODES=1
SLURM_NODEID=0
SLURM_NODELIST=node2
SLURM_NODE_ALIASES=(null)
SLURM_PRIO_PROCESS=0
SLURM_PROCID=0
SLURM_SUBMIT_DIR=/tmp/x
SLURM_SUBMIT_HOST=vm
SLURM_TASKS_PER_NODE=1
SLURM_TOPOLOGY_ADDR=node2
SLURM_TOPOLOGY_ADDR_PATTERN=node
SLURM_WORKING_CLUSTER=oracle:vm:32470:9728:109
TMPDIR=/tmp
USER=root
_=/usr/sbin/slurmstepd
)");
  Env login;
  for (const char* k : {"HOME", "LOGNAME", "MAIL", "PATH", "PYENV_ROOT", "PYENV_SHELL",
                        "PYENV_VIRTUALENV_INIT", "SHELL", "SHLVL", "USER", "_"})
    login[k] = want.at(k);
  Job job = oracle_job(34, {{"node2", 1, 0, 1}});
  job.spec.environment = exported_environment(std::string("NONE"), submit);
  Env env = env_of(job);
  add_login_environment(env, login);
  EXPECT_EQ(env, want);
}

TEST(BatchEnv, NestedSubmissionLeaksUnsetSlurmVariables) {
  // sbatch (job 65) submitted with SLURM_JOB_ID=999 SLURM_NTASKS=7 SLURM_MEM_PER_NODE=5
  // SLURM_CPUS_PER_TASK=3 SLURM_ARRAY_TASK_ID=9 SLURM_EXPORT_ENV=XX SLURM_GET_USER_ENV=0
  // SLURM_OPEN_MODE=t SLURM_JOB_NAME=jn SLURM_SUBMIT_DIR=/nope
  // SLURM_WORKING_CLUSTER=a:b:1:2:3 TMPDIR=/var/tmp HOSTNAME=subhost ENVIRONMENT=X in its
  // environment: what the batch step sets wins, the rest stays, and SLURM_CPUS_PER_TASK is
  // rewritten to the job's 1.
  Job job = oracle_job(65, {{"node1", 1, 0, 1}});
  job.spec.environment.insert({{"MYVAR", "mv"},
                               {"SLURM_FOO", "sf"},
                               {"SLURM_JOB_ID", "999"},
                               {"SLURM_NTASKS", "7"},
                               {"SLURM_MEM_PER_NODE", "5"},
                               {"SLURM_CPUS_PER_TASK", "3"},
                               {"SLURM_ARRAY_TASK_ID", "9"},
                               {"SLURM_EXPORT_ENV", "XX"},
                               {"SLURM_GET_USER_ENV", "0"},
                               {"SLURM_OPEN_MODE", "t"},
                               {"SLURM_JOB_NAME", "jn"},
                               {"SLURM_SUBMIT_DIR", "/nope"},
                               {"SLURM_WORKING_CLUSTER", "a:b:1:2:3"},
                               {"TMPDIR", "/var/tmp"},
                               {"HOSTNAME", "subhost"},
                               {"ENVIRONMENT", "X"}});
  EXPECT_EQ(env_of(job), parse_env(R"(
ENVIRONMENT=BATCH
FOO=bar
HOME=/root
HOSTNAME=node1
LOGNAME=root
MYVAR=mv
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
SHELL=/bin/bash
SLURMD_NODENAME=node1
SLURM_ARRAY_TASK_ID=9
SLURM_CLUSTER_NAME=oracle
SLURM_CONF=/tmp/oracle-env/slurm.conf
SLURM_CPUS_ON_NODE=1
SLURM_CPUS_PER_TASK=1
SLURM_EXPORT_ENV=XX
SLURM_FOO=sf
SLURM_GET_USER_ENV=0
SLURM_GTIDS=0
SLURM_JOBID=65
SLURM_JOB_CPUS_PER_NODE=1
SLURM_JOB_GID=0
SLURM_JOB_ID=65
SLURM_JOB_NAME=wrap
SLURM_JOB_NODELIST=node1
SLURM_JOB_NUM_NODES=1
SLURM_JOB_PARTITION=debug
SLURM_JOB_UID=0
SLURM_JOB_USER=root
SLURM_LOCALID=0
SLURM_MEM_PER_NODE=5
SLURM_NNODES=1
SLURM_NODEID=0
SLURM_NODELIST=node1
SLURM_NODE_ALIASES=(null)
SLURM_NTASKS=7
SLURM_OPEN_MODE=t
SLURM_PRIO_PROCESS=0
SLURM_PROCID=0
SLURM_SUBMIT_DIR=/tmp/x
SLURM_SUBMIT_HOST=vm
SLURM_TASKS_PER_NODE=1
SLURM_TOPOLOGY_ADDR=node1
SLURM_TOPOLOGY_ADDR_PATTERN=node
SLURM_WORKING_CLUSTER=oracle:vm:32470:9728:109
TMPDIR=/var/tmp
USER=root
)"));
}

TEST(BatchEnv, ZeroPaddedNodeNames) {
  // Slurm keeps zero padding in host lists (scontrol show hostlist node01,node02,node03,node10
  // -> node[01-03,10]).
  Job job = oracle_job(5, {{"node01", 2, 0, 2}, {"node02", 2, 0, 2}, {"node03", 1, 0, 1}});
  job.spec.ntasks = 5;
  job.spec.ntasks_set = true;
  Env env = env_of(job);
  EXPECT_EQ(env["SLURM_JOB_NODELIST"], "node[01-03]");
  EXPECT_EQ(env["SLURM_NODELIST"], "node[01-03]");
  EXPECT_EQ(env["SLURM_JOB_CPUS_PER_NODE"], "2(x2),1");
  EXPECT_EQ(env["SLURM_TASKS_PER_NODE"], "2(x2),1");
  EXPECT_EQ(env["SLURMD_NODENAME"], "node01");
  EXPECT_EQ(env["HOSTNAME"], "node01");
  EXPECT_EQ(env["SLURM_TOPOLOGY_ADDR"], "node01");
}

TEST(BatchEnv, NoSiteNoWorkingCluster) {
  Env env = batch_environment(oracle_job(1, {{"node1", 1, 0, 1}}), "oracle");
  EXPECT_EQ(env.count("SLURM_WORKING_CLUSTER"), 0u);
  EXPECT_EQ(env["SLURM_CLUSTER_NAME"], "oracle");
}

TEST(BatchEnv, RestartCountAfterRequeue) {
  // A job that ran `scontrol requeue $SLURM_JOB_ID` (job 178): the first run had no
  // SLURM_RESTART_COUNT, the second had SLURM_RESTART_COUNT=1 and nothing else changed.
  Job job = oracle_job(178, {{"node1", 1, 0, 1}});
  const Env first = env_of(job);
  EXPECT_EQ(first.count("SLURM_RESTART_COUNT"), 0u);
  job.restarts = 1;
  EXPECT_EQ(added(env_of(job), first), (Env{{"SLURM_RESTART_COUNT", "1"}}));
}
