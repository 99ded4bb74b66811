#pragma once
// What the state machine tells agents: a typed message (proto/agent_msg.hpp) for a node, queued
// on the batch's effects and sent once the journal batch is committed. Every order goes
// through here, so its wire form comes from the message's to_json alone.
#include <string>

#include "ctld/state_machine.hpp"
#include "proto/agent_msg.hpp"

namespace drover::ctld {

inline void order(Effects& fx, const std::string& node, const proto::ToAgent& m) {
  fx.to_agents.emplace_back(node, proto::to_json(m));
}

}  // namespace drover::ctld
