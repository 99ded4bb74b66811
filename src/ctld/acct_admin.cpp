// sacctmgr in the controller: the accounting entities it lists and changes (core/acct_admin.hpp
// has the rules), who may change them, and installing a change: the limits and fair-share tree
// the engine uses are rebuilt at once.
#include "core/error.hpp"
#include "ctld/state_machine.hpp"
#include "proto/acct_json.hpp"

namespace drover::ctld {

json StateMachine::acct_show() const {
  json data = acct_.data() ? *acct_.data() : core::new_acct_data(config_.cluster_name);
  return {{"ok", true}, {"data", std::move(data)}, {"generation", acct_.generation()}};
}

std::string StateMachine::check_accounting(const core::AcctData& data) const {
  try {
    Config probe = config_;
    apply_accounting(probe, core::acct_dump_of(data));
  } catch (const core::ParseError& e) {
    return e.what();
  }
  return "";
}

json StateMachine::acct_change(const proto::AcctChangeRequest& req, const Caller& who,
                               std::optional<core::AcctData>& to_store) {
  const core::AcctRequest& request = req.request;
  const bool commit = req.commit.value_or(false);
  if (commit && req.generation.value_or(acct_.generation()) != acct_.generation())
    return {
        {"ok", true},
        {"out", ""},
        {"err", " Error with request: the accounting data changed meanwhile, nothing was done\n"},
        {"rc", 1}};
  const core::AcctData base =
      acct_.data() ? *acct_.data() : core::new_acct_data(config_.cluster_name);
  const bool may_modify = is_operator(who) || core::acct_admin_level(base, who.user);
  std::vector<core::AcctJob> active;
  for (const auto& [id, job] : jobs_)
    if (!core::is_finished(job.state) || job.completing)
      active.push_back({id, job.spec.account, job.user, job.partition});
  core::AcctOutcome o = core::apply_acct_request(base, request, may_modify, active, commit);
  if (o.changed) {
    o.data.cluster = config_.cluster_name;
    if (const std::string why = check_accounting(o.data); !why.empty()) {
      o.err += " Error with request: " + why + "\n";
      o.rc = 1;
      o.changed = false;
    }
  }
  if (commit) {
    if (o.changed) to_store = std::move(o.data);
    return {{"ok", true}, {"out", ""}, {"err", o.err}, {"rc", o.rc}};
  }
  return {{"ok", true}, {"out", o.out},         {"err", o.err},
          {"rc", o.rc}, {"changed", o.changed}, {"generation", acct_.generation()}};
}

void StateMachine::install_accounting(core::AcctData data, Effects& fx) {
  data.cluster = config_.cluster_name;
  core::AcctDump dump = core::acct_dump_of(data);
  dump.source = "accounting";
  apply_accounting(config_, std::move(dump));
  acct_.install(std::move(data));
  // Fair share: the new tree, with the usage of the associations it still has.
  const json usage = usage_record();
  acct_.set_tree(config_.limits->fairshare_tree());
  restore_usage(usage);
  acct_.forget_submit_usage();
  full_pass_needed_ = true;
  fx.notify(notice::Reschedule{});
  fx.journal(journal::Accounting{});
}

}  // namespace drover::ctld
