// sacctmgr: add, modify, delete and show accounts, users, associations and QOS, with Slurm
// 22.05's command words, options, messages and exit codes (tests/compat/golden/accounting).
#include "cli/sacctmgr.hpp"

#include <algorithm>
#include <functional>
#include <optional>

#include "cli/client.hpp"
#include "cli/getopt.hpp"
#include "cli/help.hpp"
#include "core/acct_admin.hpp"
#include "core/error.hpp"
#include "core/text.hpp"
#include "proto/acct_json.hpp"
#include "proto/request.hpp"

namespace drover::cli {
namespace {

using core::AcctRequest;
using core::iequals;

// sacctmgr's keyword matching: a prefix of `word`, at least `min` long, any case.
bool is(std::string_view given, std::string_view word, size_t min) {
  return given.size() >= min && given.size() <= word.size() &&
         iequals(given, word.substr(0, given.size()));
}

// A command-line item: "Key=Value", "Key+=Value", "Key-=Value" or a bare word.
struct Item {
  std::string word;  // as given
  std::string key, value;
  char op = 0;  // '=', '+', '-'; 0: a bare word
};

Item split_item(const std::string& word) {
  Item it;
  it.word = word;
  const auto eq = word.find('=');
  if (eq == std::string::npos || eq == 0) return it;
  it.key = word.substr(0, eq);
  it.value = word.substr(eq + 1);
  it.op = '=';
  if (it.key.back() == '+' || it.key.back() == '-') {
    it.op = it.key.back();
    it.key.pop_back();
  }
  // sacctmgr takes quoted values too ("Description='x y'" inside one shell word).
  if (it.value.size() >= 2 && (it.value.front() == '\'' || it.value.front() == '"') &&
      it.value.back() == it.value.front())
    it.value = it.value.substr(1, it.value.size() - 2);
  return it;
}

void add_list(std::vector<std::string>& into, const std::string& value) {
  for (const auto& v : core::split_list(value, ',')) into.push_back(v);
}

// A value as an accounts.cfg option: quoted when it holds what ends or quotes an option.
std::string option(const std::string& key, const std::string& value) {
  if (value.find_first_of(":'\"#\\") == std::string::npos && !value.empty())
    return key + "=" + value;
  const char q = value.find('\'') == std::string::npos ? '\'' : '"';
  std::string out = key + "=" + q;
  for (char c : value) {
    if (c == '\\' || c == '#') out += '\\';
    out += c;
  }
  return out + q;
}

void append_setting(std::string& settings, const std::string& opt) {
  settings += (settings.empty() ? "" : ":") + opt;
}

enum class Entity { None, Account, Association, User, Qos, Unsupported };

Entity entity_of(const std::string& w) {
  if (is(w, "accounts", 2) || is(w, "acct", 4)) return Entity::Account;
  if (is(w, "associations", 2)) return Entity::Association;
  if (is(w, "users", 1)) return Entity::User;
  if (is(w, "qos", 1)) return Entity::Qos;
  for (const char* other :
       {"clusters", "configuration", "coordinators", "events", "federations", "jobs", "problems",
        "resources", "reservations", "runawayjobs", "stats", "transactions", "tres", "wckeys"})
    if (is(w, other, 2)) return Entity::Unsupported;
  return Entity::None;
}

struct Options {
  bool immediate = false, quiet = false, with_assoc = false, readonly = false;
  PrintOptions print;
};

// What one add/modify/delete's words mean; `error` set for words sacctmgr refuses.
struct Parsed {
  AcctRequest req;
  bool has_set = false;
  std::string error;
};

// A condition (modify/delete, or what add is about); false when `it` is none of them.
bool condition(Entity e, const Item& it, AcctRequest& r) {
  const std::string& k = it.key;
  if (it.op == 0) {
    add_list(r.names, it.word);
    return true;
  }
  if (is(k, "Names", 1) || (e == Entity::Account && (is(k, "Accounts", 2) || is(k, "Acct", 4))) ||
      (e == Entity::User && is(k, "Users", 1))) {
    add_list(r.names, it.value);
  } else if (e == Entity::User && (is(k, "Accounts", 2) || is(k, "Acct", 4))) {
    add_list(r.accounts, it.value);
  } else if (is(k, "Clusters", 1)) {
    add_list(r.clusters, it.value);
  } else if (e == Entity::User && is(k, "Partitions", 3)) {
    add_list(r.partitions, it.value);
  } else if (e == Entity::Account && is(k, "Parent", 3)) {
    add_list(r.parents, it.value);
  } else {
    return false;
  }
  return true;
}

// A setting of add (which also takes the conditions) or of modify's `set`: record fields,
// QOS lists, association settings or QOS fields, checked as the controller will read them.
std::string setting(Entity e, const Item& it, AcctRequest& r) {
  const std::string unknown =
      " Unknown option: " + it.word + "\n Use keyword 'where' to modify condition\n";
  if (it.op == 0) return unknown;
  const std::string& k = it.key;
  auto record = [&](const char* name) {
    r.fields.emplace_back(name, it.value);
    return std::string();
  };
  try {
    if (e == Entity::Qos) {
      const std::string opt = option(k, it.value);
      core::QosLine probe;
      core::parse_qos_options(opt, probe, "sacctmgr");
      append_setting(r.settings, opt);
      return "";
    }
    if (e == Entity::Account && is(k, "Description", 1)) return record("Description");
    if (e == Entity::Account && is(k, "Organization", 1)) return record("Organization");
    if (e == Entity::User && is(k, "DefaultAccount", 8)) return record("DefaultAccount");
    if (e == Entity::User && is(k, "AdminLevel", 2)) return record("AdminLevel");
    if (e == Entity::User && is(k, "DefaultWCKey", 8)) return record("DefaultWCKey");
    if (is(k, "QosLevel", 1)) {
      r.qos_op = it.op;
      r.qos.clear();
      add_list(r.qos, it.value);
      if (it.value == "''" || it.value == "-1") r.qos.clear();
      return "";
    }
    if ((e == Entity::Account && is(k, "Parent", 3)) || is(k, "RawUsage", 4) ||
        (e == Entity::User && is(k, "NewName", 3)) || is(k, "WCKeys", 2))
      return " " + it.key + " is not supported by drover's sacctmgr yet\n";
    const std::string opt = option(k, it.value);
    core::AcctAssocLine probe;
    core::parse_assoc_options(opt, probe, "sacctmgr");
    append_setting(r.settings, opt);
    return "";
  } catch (const core::ParseError& err) {
    std::string what = err.what();
    if (what.find("unknown") != std::string::npos) return unknown;
    if (what.rfind("sacctmgr: ", 0) == 0) what.erase(0, 10);
    return " " + what + "\n";
  }
}

Parsed parse_change(AcctRequest::Action action, Entity e, const std::vector<std::string>& words) {
  Parsed p;
  p.req.action = action;
  p.req.entity = e == Entity::Account ? AcctRequest::Entity::Account
                 : e == Entity::User  ? AcctRequest::Entity::User
                                      : AcctRequest::Entity::Qos;
  bool in_set = false;
  for (const std::string& w : words) {
    if (is(w, "where", 5)) {
      in_set = false;
      continue;
    }
    if (is(w, "set", 3)) {
      in_set = true;
      p.has_set = true;
      continue;
    }
    const Item it = split_item(w);
    if (action == AcctRequest::Action::Add) {
      // Add has no where/set: the conditions say what to add, the rest are its settings.
      if (condition(e, it, p.req)) continue;
    } else if (!in_set) {
      if (!condition(e, it, p.req)) {
        p.error = " Unknown condition: " + w + "\n Use keyword 'set' to modify value\n";
        return p;
      }
      continue;
    } else if (action == AcctRequest::Action::Delete) {
      continue;
    }
    if (std::string err = setting(e, it, p.req); !err.empty()) {
      p.error = err;
      return p;
    }
  }
  return p;
}

// sacctmgr's commit_check: the question, then one character of the answer at a time.
bool commit_check(const CommandEnv& env, CommandResult& res) {
  res.out += "Would you like to commit changes? (You have 30 seconds to decide)\n";
  int c = 0;
  bool timed_out = false;
  while (c != 'Y' && c != 'y' && c != 'N' && c != 'n' && c != '\n') {
    if (c) res.out += "Y or N please\n";
    res.out += "(N/y): ";
    const int got = env.answer ? env.answer(res, 30) : -1;
    if (got == -2) {
      timed_out = true;
      break;
    }
    // At the end of the input Slurm's sacctmgr keeps asking for ever; drover takes it as no.
    c = got == -1 ? 'n' : got;
    res.out += "\n";
  }
  if (timed_out) res.out += "timeout\n";
  return !timed_out && (c == 'Y' || c == 'y');
}

int talk_failure(CommandResult& res) {
  res.err +=
      "sacctmgr: error: Problem talking to the database: Unable to contact slurm "
      "controller (connect failure)\n";
  return 1;
}

int change(const CommandEnv& env, const Options& opt, const AcctRequest& req, CommandResult& res) {
  json preview;
  try {
    preview = env.call(proto::AcctChangeRequest{.request = req, .commit = false}.to_json());
  } catch (const ControllerUnreachable&) {
    return talk_failure(res);
  }
  if (!preview.value("ok", false)) {
    res.err += "sacctmgr: error: " + preview.value("error", std::string("unknown error")) + "\n";
    return 1;
  }
  if (!opt.quiet) res.out += preview.value("out", "");
  res.err += preview.value("err", "");
  int rc = preview.value("rc", 0);
  if (!preview.value("changed", false)) return rc;
  if (!opt.immediate && !commit_check(env, res)) {
    res.out += " Changes Discarded\n";
    return rc;
  }
  json done;
  try {
    done = env.call(proto::AcctChangeRequest{
        .request = req, .commit = true, .generation = preview.value("generation", uint64_t{0})}
                        .to_json());
  } catch (const ControllerUnreachable&) {
    return talk_failure(res);
  }
  res.out += done.value("out", "");
  res.err += done.value("err", "");
  return done.value("rc", 0) != 0 ? done.value("rc", 1) : rc;
}

int show(const CommandEnv& env, const Options& opt, Entity e, const std::vector<std::string>& words,
         CommandResult& res) {
  ShowRequest req;
  req.entity = e == Entity::Account ? "account"
               : e == Entity::User  ? "user"
               : e == Entity::Qos   ? "qos"
                                    : "association";
  req.with_assoc = opt.with_assoc;
  for (const std::string& w : words) {
    if (is(w, "where", 5)) continue;
    const Item it = split_item(w);
    const std::string& k = it.key;
    auto where = [&](const char* key) { req.where.emplace_back(key, it.value); };
    if (it.op == 0) {
      if (is(w, "WithAssoc", 5)) {
        req.with_assoc = true;
      } else if (e == Entity::Association && is(w, "Tree", 4)) {
        req.tree = true;
      } else if (is(w, "WithDeleted", 5) || is(w, "WithCoordinators", 5) || is(w, "WOPLimits", 4) ||
                 is(w, "WOLimits", 3) || is(w, "WOPInfo", 4) || is(w, "OnlyDefaults", 3) ||
                 is(w, "WithSubAccounts", 5)) {
        // Accepted; drover keeps no deleted records and lists parents' limits as shown.
      } else {
        add_list(req.names, w);
      }
      continue;
    }
    if (is(k, "Format", 1)) {
      req.format = it.value;
    } else if (is(k, "Clusters", 1)) {
      // One cluster: the listing is the same.
    } else if (is(k, "Names", 1) ||
               (e == Entity::Account && is(k, "Accounts", 2) && !req.with_assoc) ||
               (e == Entity::User && is(k, "Users", 1)) ||
               (e == Entity::Qos && is(k, "Names", 1))) {
      add_list(req.names, it.value);
    } else if (is(k, "Accounts", 2) || is(k, "Acct", 4)) {
      where("accounts");
    } else if (is(k, "Users", 1)) {
      where("users");
    } else if (is(k, "Partitions", 3)) {
      where("partitions");
    } else if (is(k, "Ids", 1)) {
      where("ids");
    } else if (e == Entity::Account && is(k, "Descriptions", 1)) {
      where("descriptions");
    } else if (e == Entity::Account && is(k, "Organizations", 1)) {
      where("organizations");
    } else if (e == Entity::User && is(k, "DefaultAccount", 8)) {
      where("defaultaccounts");
    } else if (e == Entity::User && is(k, "AdminLevel", 2)) {
      where("adminlevels");
    } else {
      res.err += " Unknown condition: " + w + "\n Use keyword 'set' to modify value\n";
      return 1;
    }
  }
  json reply;
  try {
    reply = env.call(proto::AcctShowRequest{}.to_json());
  } catch (const ControllerUnreachable&) {
    return talk_failure(res);
  }
  if (!reply.value("ok", false)) {
    res.err += "sacctmgr: error: " + reply.value("error", std::string("unknown error")) + "\n";
    return 1;
  }
  core::AcctData data;
  try {
    data = reply.at("data").get<core::AcctData>();
  } catch (const std::exception& err) {
    res.err += std::string("sacctmgr: error: unreadable answer: ") + err.what() + "\n";
    return 1;
  }
  show_entities(data, req, opt.print, res);
  return res.rc;
}

const char* kListEntities =
    "Input line must include \"Account\", \"Association\", \"Cluster\", \"Configuration\",\n"
    "\"Event\", \"Federation\", \"Problem\", \"QOS\", \"Resource\", \"Reservation\",\n"
    "\"RunAwayJobs\", \"Stats\", \"Transaction\", \"TRES\", \"User\", or \"WCKey\"\n";

const std::vector<LongOption> kLongOptions = {
    {"associations", ArgKind::None, 's'}, {"help", ArgKind::None, 'h'},
    {"immediate", ArgKind::None, 'i'},    {"noheader", ArgKind::None, 'n'},
    {"parsable", ArgKind::None, 'p'},     {"parsable2", ArgKind::None, 'P'},
    {"quiet", ArgKind::None, 'Q'},        {"readonly", ArgKind::None, 'r'},
    {"verbose", ArgKind::None, 'v'},      {"version", ArgKind::None, 'V'},
    {"oneliner", ArgKind::None, 'o'},     {"usage", ArgKind::None, 'h'},
};

// --help, --usage and the help command: Slurm 22.05's layout and option set, drover's words,
// and only the commands drover has.
const char* kUsage =
    "sacctmgr [<OPTION>] [<COMMAND>]\n"
    "    Valid <OPTION> values are:\n"
    "     -h or --help: print this help (the \"help\" command)\n"
    "     -i or --immediate: make changes without asking first\n"
    "     -n or --noheader: leave out the header line of listings\n"
    "     -o or --oneliner: one record per line\n"
    "     -p or --parsable: fields split by '|', one more '|' at the end\n"
    "     -P or --parsable2: fields split by '|', none at the end\n"
    "     -Q or --quiet: errors only\n"
    "     -r or --readonly: refuse every change\n"
    "     -s or --associations: listings show each entity's associations\n"
    "     -v or --verbose: more detail about what sacctmgr does\n"
    "     -V or --version: print the version (the \"version\" command)\n"
    "\n"
    "  drover's sacctmgr runs the one command given on its command line; it has\n"
    "  no interactive mode.\n"
    "\n"
    "  Valid <COMMAND> values are:\n"
    "     add <ENTITY> <SPECS>     create accounts, users or QOS\n"
    "     create <ENTITY> <SPECS>  the same as add\n"
    "     delete <ENTITY> <SPECS>  remove accounts, users or QOS\n"
    "     help                     print this help\n"
    "     list <ENTITY> [<SPECS>]  print entities, all of them without <SPECS>\n"
    "     modify <ENTITY> <SPECS>  change accounts, users or QOS\n"
    "     remove <ENTITY> <SPECS>  the same as delete\n"
    "     show <ENTITY> [<SPECS>]  the same as list\n"
    "     update <ENTITY> <SPECS>  the same as modify\n"
    "     version                  print the version\n"
    "\n"
    "  <ENTITY> may be \"account\", \"association\" (list only), \"qos\" or \"user\".\n"
    "\n"
    "  <SPECS> are Key=Value words, as the listings name their columns, e.g.\n"
    "       add account physics Parent=root Description=dept Fairshare=10\n"
    "       add user alice Account=physics DefaultAccount=physics\n"
    "       modify qos normal set MaxWall=1-00:00:00\n"
    "       list associations format=account,user,fairshare\n"
    "  \"where\" starts the conditions that select what modify changes, \"set\" the\n"
    "  values it gives them.\n";

}  // namespace

extern const CommandHelp kSacctmgrHelp{
    "sacctmgr", "shows and changes accounts, users, QOS and their associations",
    "sacctmgr [<OPTION>] [<COMMAND>]\n", kUsage,
    "drover keeps accounts, users, QOS and associations in the controller's own store; "
    "there is no slurmdbd, so clusters, events, jobs, reservations, TRES, WCKeys and the "
    "other entities of Slurm's sacctmgr are answered \"not supported by drover's sacctmgr\". "
    "Only the commands listed exist: there is no interactive mode, and -o/--oneliner is "
    "refused.\n\n"
    "Options follow getopt_long's rules: any unique prefix of a long option is taken; "
    "command words may be shortened as in Slurm (\"lis\" for list)."};

CommandResult run_sacctmgr(const std::vector<std::string>& args, const CommandEnv& env) {
  CommandResult res;
  const ParsedArgs parsed = parse_options("sacctmgr", args, "hinopPQrsvV", kLongOptions);
  if (!parsed.error.empty()) {
    res.err = parsed.error + "\nTry \"sacctmgr --help\" for more information\n";
    res.rc = 1;
    return res;
  }
  Options opt;
  for (const ParsedOption& o : parsed.options) {
    switch (o.id) {
      case 'h':
        res.out = kUsage;
        return res;
      case 'i':
        opt.immediate = true;
        break;
      case 'n':
        opt.print.no_header = true;
        break;
      case 'p':
        opt.print.parsable = true;
        opt.print.parsable2 = false;
        break;
      case 'P':
        opt.print.parsable2 = true;
        opt.print.parsable = false;
        break;
      case 'Q':
        opt.quiet = true;
        break;
      case 'r':
        opt.readonly = true;
        break;
      case 's':
        opt.with_assoc = true;
        break;
      case 'V':
        res.out = version_text();
        return res;
      case 'o':
        res.err = "sacctmgr: error: -o/--oneliner is not supported by drover\n";
        res.rc = 1;
        return res;
      default:
        break;
    }
  }
  const std::vector<std::string>& words = parsed.operands;
  if (words.empty()) {
    res.err = "sacctmgr: give a command: drover's sacctmgr has no interactive mode\n";
    res.rc = 1;
    return res;
  }
  const std::string& command = words[0];
  enum class Cmd { Add, Modify, Delete, Show, None } cmd = Cmd::None;
  if (is(command, "add", 3) || is(command, "create", 3))
    cmd = Cmd::Add;
  else if (is(command, "modify", 1) || is(command, "update", 1))
    cmd = Cmd::Modify;
  else if (is(command, "delete", 3) || is(command, "remove", 3))
    cmd = Cmd::Delete;
  else if (is(command, "show", 3) || is(command, "list", 3))
    cmd = Cmd::Show;
  else if (is(command, "version", 4)) {
    res.out = version_text();
    return res;
  } else if (is(command, "help", 2)) {
    res.out = kUsage;
    return res;
  }
  if (cmd == Cmd::None) {
    res.err = "invalid keyword: " + command + "\n";
    res.rc = 1;
    return res;
  }
  const Entity e = words.size() > 1 ? entity_of(words[1]) : Entity::None;
  const std::vector<std::string> rest(words.begin() + std::min<size_t>(2, words.size()),
                                      words.end());
  const char* cmd_name = cmd == Cmd::Add      ? "add"
                         : cmd == Cmd::Modify ? "modify"
                         : cmd == Cmd::Delete ? "delete"
                                              : "list";
  if (e == Entity::None || (cmd != Cmd::Show && e == Entity::Association)) {
    res.err = std::string("No valid entity in ") + cmd_name + " command\n" + kListEntities;
    res.rc = 1;
    return res;
  }
  if (e == Entity::Unsupported) {
    res.err = " " + words[1] + " is not supported by drover's sacctmgr yet\n";
    res.rc = 1;
    return res;
  }
  if (cmd == Cmd::Show) {
    res.rc = show(env, opt, e, rest, res);
    return res;
  }
  if (opt.readonly) {
    res.err = "Can't run this command in readonly mode.\n";
    res.rc = 1;
    return res;
  }
  const auto action = cmd == Cmd::Add      ? AcctRequest::Action::Add
                      : cmd == Cmd::Modify ? AcctRequest::Action::Modify
                                           : AcctRequest::Action::Delete;
  const Parsed p = parse_change(action, e, rest);
  if (!p.error.empty()) {
    res.err = p.error;
    res.rc = 1;
    return res;
  }
  if (action == AcctRequest::Action::Modify && p.req.fields.empty() && p.req.settings.empty() &&
      p.req.qos_op == 0) {
    res.err = " You didn't give me anything to set\n";
    res.rc = 1;
    return res;
  }
  res.rc = change(env, opt, p.req, res);
  return res;
}

}  // namespace drover::cli
