#include "store/acct_record_json.hpp"

namespace drover::store {

nlohmann::json record_json(const JobRecord& r) {
  nlohmann::json steps = nlohmann::json::array();
  for (const auto& s : r.steps)
    steps.push_back({{"name", s.name},
                     {"state", s.state},
                     {"exit_code", s.exit_code},
                     {"exit_signal", s.exit_signal},
                     {"start_time", s.start_time},
                     {"end_time", s.end_time},
                     {"nodelist", s.nodelist},
                     {"nnodes", s.nnodes},
                     {"ncpus", s.ncpus},
                     {"alloc_tres", s.alloc_tres},
                     {"job_name", s.job_name},
                     {"ntasks", s.ntasks},
                     {"max_rss_kb", s.max_rss_kb}});
  return {{"job_id", r.job_id},
          {"array_job_id", r.array_job_id},
          {"array_task_id", r.array_task_id},
          {"name", r.name},
          {"user", r.user},
          {"group", r.group},
          {"uid", r.uid},
          {"gid", r.gid},
          {"account", r.account},
          {"qos", r.qos},
          {"partition", r.partition},
          {"submit_time", r.submit_time},
          {"eligible_time", r.eligible_time},
          {"start_time", r.start_time},
          {"end_time", r.end_time},
          {"state", r.state},
          {"reason", r.reason},
          {"exit_code", r.exit_code},
          {"exit_signal", r.exit_signal},
          {"cancelled_by", r.cancelled_by},
          {"req_cpus", r.req_cpus},
          {"req_mem_mb", r.req_mem_mb},
          {"req_mem_per_cpu", r.req_mem_per_cpu},
          {"req_nodes", r.req_nodes},
          {"req_tres", r.req_tres},
          {"alloc_tres", r.alloc_tres},
          {"alloc_cpus", r.alloc_cpus},
          {"nnodes", r.nnodes},
          {"nodelist", r.nodelist},
          {"workdir", r.workdir},
          {"time_limit_min", r.time_limit_min},
          {"restarts", r.restarts},
          {"priority", r.priority},
          {"system_comment", r.system_comment},
          {"steps", std::move(steps)}};
}

JobRecord record_from_json(const nlohmann::json& j) {
  JobRecord r;
  j.at("job_id").get_to(r.job_id);
  j.at("array_job_id").get_to(r.array_job_id);
  j.at("array_task_id").get_to(r.array_task_id);
  j.at("name").get_to(r.name);
  j.at("user").get_to(r.user);
  j.at("group").get_to(r.group);
  j.at("uid").get_to(r.uid);
  j.at("gid").get_to(r.gid);
  j.at("account").get_to(r.account);
  j.at("qos").get_to(r.qos);
  j.at("partition").get_to(r.partition);
  j.at("submit_time").get_to(r.submit_time);
  j.at("eligible_time").get_to(r.eligible_time);
  j.at("start_time").get_to(r.start_time);
  j.at("end_time").get_to(r.end_time);
  j.at("state").get_to(r.state);
  j.at("reason").get_to(r.reason);
  j.at("exit_code").get_to(r.exit_code);
  j.at("exit_signal").get_to(r.exit_signal);
  j.at("cancelled_by").get_to(r.cancelled_by);
  j.at("req_cpus").get_to(r.req_cpus);
  j.at("req_mem_mb").get_to(r.req_mem_mb);
  j.at("req_mem_per_cpu").get_to(r.req_mem_per_cpu);
  j.at("req_nodes").get_to(r.req_nodes);
  j.at("req_tres").get_to(r.req_tres);
  j.at("alloc_tres").get_to(r.alloc_tres);
  j.at("alloc_cpus").get_to(r.alloc_cpus);
  j.at("nnodes").get_to(r.nnodes);
  j.at("nodelist").get_to(r.nodelist);
  j.at("workdir").get_to(r.workdir);
  j.at("time_limit_min").get_to(r.time_limit_min);
  j.at("restarts").get_to(r.restarts);
  j.at("priority").get_to(r.priority);
  r.system_comment = j.value("system_comment", "");  // records written before it have none
  for (const auto& s : j.at("steps")) {
    StepRecord& st = r.steps.emplace_back();
    s.at("name").get_to(st.name);
    s.at("state").get_to(st.state);
    s.at("exit_code").get_to(st.exit_code);
    s.at("exit_signal").get_to(st.exit_signal);
    s.at("start_time").get_to(st.start_time);
    s.at("end_time").get_to(st.end_time);
    s.at("nodelist").get_to(st.nodelist);
    s.at("nnodes").get_to(st.nnodes);
    s.at("ncpus").get_to(st.ncpus);
    s.at("alloc_tres").get_to(st.alloc_tres);
    s.at("job_name").get_to(st.job_name);
    s.at("ntasks").get_to(st.ntasks);
    st.max_rss_kb = s.value("max_rss_kb", int64_t{-1});  // absent in records journaled before
  }
  return r;
}

}  // namespace drover::store
