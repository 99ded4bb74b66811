#include "core/sbatch_options.hpp"

#include <gtest/gtest.h>

#include "core/duration.hpp"

using namespace drover::core;
using V = std::vector<std::string>;

namespace {

// The message a parse fails with, or "no error".
std::string error_of(const V& args) {
  try {
    parse_sbatch_args(args);
  } catch (const ParseError& e) {
    return e.what();
  }
  return "no error";
}

std::string hinted(const std::string& line) {
  return line + "\nTry \"sbatch --help\" for more information";
}

}  // namespace

TEST(SbatchArgs, ShortLongAndClusters) {
  SbatchOptions o = parse_sbatch_args({"-N2", "-n", "4", "-Jname", "--partition=debug", "--account",
                                       "phys", "-vvH", "--parsable", "job.sh", "a", "-b"});
  EXPECT_EQ(o.nodes_min, 2);
  EXPECT_FALSE(o.nodes_max);
  EXPECT_EQ(o.ntasks, 4);
  EXPECT_EQ(o.job_name, "name");
  EXPECT_EQ(o.partition, "debug");
  EXPECT_EQ(o.account, "phys");
  EXPECT_EQ(o.verbose, 2);
  EXPECT_TRUE(o.hold);
  EXPECT_TRUE(o.parsable);
  // Everything from the first non-option belongs to the script.
  EXPECT_EQ(o.script_argv, (V{"job.sh", "a", "-b"}));
  EXPECT_EQ(o.set_options, (V{"nodes", "ntasks", "job-name", "partition", "account", "verbose",
                              "hold", "parsable"}));
}

TEST(SbatchArgs, DoubleDashAndStdinScript) {
  EXPECT_EQ(parse_sbatch_args({"-J", "x", "--", "-script", "--arg"}).script_argv,
            (V{"-script", "--arg"}));
  EXPECT_EQ(parse_sbatch_args({"-"}).script_argv, V{"-"});
  EXPECT_TRUE(parse_sbatch_args({}).script_argv.empty());
  // A required argument may itself start with '-'.
  EXPECT_EQ(parse_sbatch_args({"-J", "-weird"}).job_name, "-weird");
  EXPECT_EQ(parse_sbatch_args({"--comment", "--x"}).comment, "--x");
}

TEST(SbatchArgs, LongPrefixes) {
  EXPECT_EQ(parse_sbatch_args({"--partit=x"}).partition, "x");
  EXPECT_EQ(parse_sbatch_args({"--wra=hi"}).wrap, "hi");
  EXPECT_EQ(parse_sbatch_args({"--mem=5"}).mem_mb, 5);  // exact match beats --mem-per-cpu
  EXPECT_EQ(parse_sbatch_args({"--time", "5"}).time_limit_min, 5);  // exact beats --time-min
  EXPECT_EQ(parse_sbatch_args({"--tasks-per-node=3"}).ntasks_per_node, 3);
}

TEST(SbatchArgs, UsageErrorsMatchGetopt) {
  // Texts as printed by sbatch 22.05 after "sbatch: ".
  EXPECT_EQ(error_of({"--foo"}), hinted("unrecognized option '--foo'"));
  EXPECT_EQ(error_of({"--workdir=/tmp"}), hinted("unrecognized option '--workdir=/tmp'"));
  EXPECT_EQ(error_of({"-Z"}), hinted("invalid option -- 'Z'"));
  EXPECT_EQ(error_of({"-H1"}), hinted("invalid option -- '1'"));
  EXPECT_EQ(error_of({"--par"}),
            hinted("option '--par' is ambiguous; possibilities: '--parsable' '--partition'"));
  EXPECT_EQ(error_of({"--pa=x"}),
            hinted("option '--pa=x' is ambiguous; possibilities: '--parsable' '--partition'"));
  // An empty name is a prefix of every option, as glibc's getopt_long finds.
  EXPECT_EQ(error_of({"--=x"}).rfind("option '--=x' is ambiguous; possibilities: '--account' ", 0),
            0u);
  // Each option acts in turn: help before a bad option helps, after it the error wins.
  EXPECT_TRUE(parse_sbatch_args({"--help", "--bogus"}).help);
  EXPECT_EQ(error_of({"--bogus", "--help"}), hinted("unrecognized option '--bogus'"));
  EXPECT_EQ(error_of({"--a"}), hinted("option '--a' is ambiguous; possibilities: '--account' "
                                      "'--acctg-freq' '--array'"));
  EXPECT_EQ(error_of({"--time"}), hinted("option '--time' requires an argument"));
  EXPECT_EQ(error_of({"--job"}), hinted("option '--job-name' requires an argument"));
  EXPECT_EQ(error_of({"-t"}), hinted("option requires an argument -- 't'"));
  EXPECT_EQ(error_of({"-vJ"}), hinted("option requires an argument -- 'J'"));
  EXPECT_EQ(error_of({"--parsable=1"}), hinted("option '--parsable' doesn't allow an argument"));
  EXPECT_EQ(error_of({"--hold=yes"}), hinted("option '--hold' doesn't allow an argument"));
  EXPECT_EQ(error_of({"--no-requeue=x"}),
            hinted("option '--no-requeue' doesn't allow an argument"));
  EXPECT_THROW(parse_sbatch_args({"--foo"}), SbatchUsageError);
}

TEST(SbatchArgs, HelpUsageVersionStopParsing) {
  SbatchOptions o = parse_sbatch_args({"-h", "--foo"});
  EXPECT_TRUE(o.help);
  EXPECT_TRUE(parse_sbatch_args({"-V", "--time=bad"}).version);
  EXPECT_TRUE(parse_sbatch_args({"--usage"}).usage);
  EXPECT_EQ(error_of({"--time=bad", "-V"}), "Invalid --time specification");
}

TEST(SbatchArgs, Time) {
  EXPECT_EQ(parse_sbatch_args({"-t", "1-0"}).time_limit_min, 1440);
  EXPECT_EQ(parse_sbatch_args({"--time=0:30"}).time_limit_min, 1);
  EXPECT_EQ(parse_sbatch_args({"--time=0"}).time_limit_min, kInfinite);  // sbatch: UNLIMITED
  EXPECT_EQ(parse_sbatch_args({"--time=UNLIMITED"}).time_limit_min, kInfinite);
  EXPECT_EQ(parse_sbatch_args({"--time-min=1:30"}).time_min_min, 2);
  EXPECT_EQ(error_of({"--time=bad"}), "Invalid --time specification");
  EXPECT_EQ(error_of({"--time-min=bad"}), "Invalid --time-min specification");
  EXPECT_EQ(error_of({"--delay-boot=x"}), "Invalid --delay-boot specification");
}

TEST(SbatchArgs, Nodes) {
  SbatchOptions o = parse_sbatch_args({"-N2-4"});
  EXPECT_EQ(o.nodes_min, 2);
  EXPECT_EQ(o.nodes_max, 4);
  o = parse_sbatch_args({"-N-3"});
  EXPECT_EQ(o.nodes_min, 1);
  EXPECT_EQ(o.nodes_max, 3);
  o = parse_sbatch_args({"-N1-2k"});
  EXPECT_EQ(o.nodes_max, 2048);
  EXPECT_EQ(parse_sbatch_args({"-N1k"}).nodes_min, 1024);
  EXPECT_EQ(parse_sbatch_args({"-N0"}).nodes_min, 0);
  EXPECT_EQ(parse_sbatch_args({"-N+2"}).nodes_min, 2);
  // A later -N without a range clears an earlier maximum.
  EXPECT_FALSE(parse_sbatch_args({"-N1-3", "-N2"}).nodes_max);
  EXPECT_EQ(error_of({"-Nbad"}), "\"bad\" is not a valid node count");
  EXPECT_EQ(error_of({"-N2x"}), "\"2x\" is not a valid node count");
  EXPECT_EQ(error_of({"-N1,2"}), "\"1,2\" is not a valid node count");
  EXPECT_EQ(error_of({"-N3-1"}), "Maximum node count 1 is less than minimum node count 3");
  EXPECT_EQ(error_of({"-N2-"}), "Maximum node count -1 is less than minimum node count 2");
  EXPECT_EQ(error_of({"-N99999999999"}), "\"99999999999\" is not a valid node count");
}

TEST(SbatchArgs, Counts) {
  EXPECT_EQ(parse_sbatch_args({"-c", "8"}).cpus_per_task, 8);
  EXPECT_EQ(parse_sbatch_args({"--ntasks-per-node=2"}).ntasks_per_node, 2);
  EXPECT_EQ(error_of({"-nbad"}), "Invalid numeric value \"bad\" for --ntasks.");
  EXPECT_EQ(error_of({"-n0"}), "Invalid numeric value \"0\" for --ntasks.");
  EXPECT_EQ(error_of({"-n-1"}), "Invalid numeric value \"-1\" for --ntasks.");
  EXPECT_EQ(error_of({"-n5x"}), "Invalid numeric value \"5x\" for --ntasks.");
  EXPECT_EQ(error_of({"-n1k"}), "Invalid numeric value \"1k\" for --ntasks.");
  EXPECT_EQ(error_of({"-c0"}), "Invalid numeric value \"0\" for --cpus-per-task.");
  EXPECT_EQ(error_of({"--ntasks-per-node=x"}),
            "Invalid numeric value \"x\" for --ntasks-per-node.");
  EXPECT_EQ(error_of({"--mincpus=0"}), "Invalid numeric value \"0\" for --mincpus.");
  EXPECT_EQ(error_of({"--thread-spec=0"}), "Invalid numeric value \"0\" for --thread-spec.");
  EXPECT_EQ(error_of({"--switches=x"}), "Invalid numeric value \"x\" for --switches.");
  EXPECT_EQ(error_of({"--cpus-per-gpu=0"}), "Invalid numeric value \"0\" for --cpus-per-gpu.");
  EXPECT_EQ(error_of({"-Bx"}), "Invalid numeric value \"x\" for first arg of -B.");
  EXPECT_EQ(error_of({"--wait-all-nodes=2"}), "Invalid --wait-all-nodes specification");
  EXPECT_EQ(error_of({"--wait-all-nodes=x"}), "Invalid numeric value \"x\" for --wait-all-nodes.");
  EXPECT_EQ(parse_sbatch_args({"--core-spec=0"}).other.at("core-spec"), "0");
  EXPECT_EQ(parse_sbatch_args({"-B2:4:1"}).other.at("extra-node-info"), "2:4:1");
}

TEST(SbatchArgs, Memory) {
  SbatchOptions o = parse_sbatch_args({"--mem=2G", "--mem-per-cpu=512", "--mem-per-gpu=1T"});
  EXPECT_EQ(o.mem_mb, 2048);
  EXPECT_EQ(o.mem_per_cpu_mb, 512);
  EXPECT_EQ(o.mem_per_gpu_mb, 1024 * 1024);
  EXPECT_EQ(parse_sbatch_args({"--mem=0"}).mem_mb, 0);
  EXPECT_EQ(error_of({"--mem=1P"}), "Invalid --mem specification");
  EXPECT_EQ(error_of({"--mem-per-cpu=bad"}), "Invalid --mem-per-cpu specification");
  EXPECT_EQ(error_of({"--mem-per-gpu=bad"}), "Invalid --mem-per-gpu specification");
  EXPECT_EQ(error_of({"--tmp=x"}), "Invalid --tmp specification");
}

TEST(SbatchArgs, NiceAndPriority) {
  EXPECT_EQ(parse_sbatch_args({"--nice"}).nice, kDefaultNice);
  EXPECT_EQ(parse_sbatch_args({"--nice=5"}).nice, 5);
  EXPECT_EQ(parse_sbatch_args({"--nice=-5"}).nice, -5);
  EXPECT_EQ(parse_sbatch_args({"--nice=+5"}).nice, 5);
  // Optional arguments never take the next word.
  SbatchOptions o = parse_sbatch_args({"--nice", "5"});
  EXPECT_EQ(o.nice, kDefaultNice);
  EXPECT_EQ(o.script_argv, V{"5"});
  EXPECT_EQ(error_of({"--nice=2147483646"}), "Invalid --nice value, out of range (+/- 2147483645)");
  EXPECT_EQ(parse_sbatch_args({"--priority=5"}).priority, 5);
  EXPECT_EQ(parse_sbatch_args({"--priority=top"}).priority, kPriorityTop);
  EXPECT_EQ(error_of({"--priority=-1"}), "Priority must be >= 0");
  // Real sbatch's words for a value past 32 bits (it would otherwise not fit).
  EXPECT_EQ(error_of({"--priority=99999999999"}), "Priority must be < 4294967294");
  EXPECT_EQ(error_of({"--priority=4294967294"}), "Priority must be < 4294967294");
  EXPECT_EQ(error_of({"--priority=99999999999999999999999"}), "Priority must be < 4294967294");
}

TEST(SbatchArgs, EnumeratedValues) {
  EXPECT_EQ(parse_sbatch_args({"--open-mode=APPEND"}).open_mode, "append");
  EXPECT_EQ(parse_sbatch_args({"--open-mode=t"}).open_mode, "truncate");
  EXPECT_EQ(error_of({"--open-mode=x"}), "Invalid --open-mode specification");
  EXPECT_EQ(parse_sbatch_args({"--mail-type=end,FAIL"}).mail_type, "END,FAIL");
  EXPECT_EQ(parse_sbatch_args({"--mail-type=END,"}).mail_type, "END,");
  EXPECT_EQ(error_of({"--mail-type=BAD"}), "Invalid --mail-type specification");
  SbatchOptions k = parse_sbatch_args({"--kill-on-invalid-dep=YES"});
  EXPECT_TRUE(k.kill_on_invalid_dep_set);
  EXPECT_TRUE(k.kill_on_invalid_dep);
  EXPECT_FALSE(parse_sbatch_args({"--kill-on-invalid-dep=no"}).kill_on_invalid_dep);
  EXPECT_EQ(error_of({"--kill-on-invalid-dep=1"}), "Invalid --kill-on-invalid-dep specification");
  SbatchOptions e = parse_sbatch_args({"--exclusive"});
  EXPECT_TRUE(e.exclusive);
  EXPECT_EQ(e.other.at("exclusive"), "exclusive");
  EXPECT_EQ(parse_sbatch_args({"--exclusive=USER"}).other.at("exclusive"), "user");
  EXPECT_EQ(error_of({"--exclusive=bad"}), "Invalid --exclusive specification");
  SbatchOptions r = parse_sbatch_args({"--requeue", "--no-requeue"});
  EXPECT_TRUE(r.requeue_set);
  EXPECT_FALSE(r.requeue);
  EXPECT_EQ(parse_sbatch_args({"-k"}).other.at("no-kill"), "");
  EXPECT_EQ(parse_sbatch_args({"-koff"}).other.at("no-kill"), "off");
  EXPECT_EQ(error_of({"--no-kill=x"}), "Invalid --no-kill specification");
}

TEST(SbatchArgs, Signal) {
  for (const char* ok : {"USR1@60", "B:10", "R:USR2@30", "99", "SIGUSR1", "usr1", "RB:1", "1@"})
    EXPECT_EQ(parse_sbatch_args({std::string("--signal=") + ok}).signal, ok);
  for (const char* bad : {"bad", "USR1@x", "0", "KILL@70000", "X:1", "1@-5"})
    EXPECT_EQ(error_of({std::string("--signal=") + bad}), "Invalid --signal specification") << bad;
}

TEST(SbatchArgs, Distribution) {
  for (const char* ok : {"cyclic", "block:cyclic:fcyclic", "plane=4", "arbitrary", "*:block",
                         "cyclic,Pack", "CYCLIC", "block:block,NoPack"})
    EXPECT_EQ(parse_sbatch_args({std::string("-m") + ok}).distribution, ok);
  for (const char* bad : {"bad", "plane", "block:arbitrary", "a:b:c:d", "block,maybe"})
    EXPECT_EQ(error_of({std::string("--distribution=") + bad}),
              "Invalid --distribution specification")
        << bad;
}

TEST(SbatchArgs, RawStringsAndOther) {
  SbatchOptions o = parse_sbatch_args({"-o",
                                       "out-%j",
                                       "-e",
                                       "err",
                                       "-i",
                                       "in",
                                       "-D",
                                       "/work",
                                       "-q",
                                       "high",
                                       "--comment=c",
                                       "--wrap=echo hi",
                                       "--reservation=r",
                                       "-C",
                                       "intel&avx",
                                       "-w",
                                       "n[1-2]",
                                       "-x",
                                       "n3",
                                       "--gres=gpu:2",
                                       "-G",
                                       "4",
                                       "-d",
                                       "afterok:1",
                                       "-a",
                                       "0-3%1",
                                       "-b",
                                       "now+60",
                                       "--export=ALL,FOO=1",
                                       "--mail-user=a@b",
                                       "--deadline=2030-01-01",
                                       "-L",
                                       "lic:2",
                                       "--mem-bind=local",
                                       "--gpus-per-node=a100:2",
                                       "--gpus-per-task=1",
                                       "--wckey=k",
                                       "--uid=5",
                                       "-s",
                                       "--propagate",
                                       "--get-user-env=10L",
                                       "-M",
                                       "c1",
                                       "--test-only",
                                       "-W",
                                       "-Q",
                                       "-O",
                                       "--contiguous"});
  EXPECT_EQ(o.output, "out-%j");
  EXPECT_EQ(o.error, "err");
  EXPECT_EQ(o.input, "in");
  EXPECT_EQ(o.workdir, "/work");
  EXPECT_EQ(o.qos, "high");
  EXPECT_EQ(o.comment, "c");
  EXPECT_EQ(o.wrap, "echo hi");
  EXPECT_EQ(o.reservation, "r");
  EXPECT_EQ(o.constraint, "intel&avx");
  EXPECT_EQ(o.nodelist, "n[1-2]");
  EXPECT_EQ(o.exclude, "n3");
  EXPECT_EQ(o.gres, "gpu:2");
  EXPECT_EQ(o.gpus, "4");
  EXPECT_EQ(o.dependency, "afterok:1");
  EXPECT_EQ(o.array, "0-3%1");
  EXPECT_EQ(o.begin, "now+60");
  EXPECT_EQ(o.export_env, "ALL,FOO=1");
  EXPECT_EQ(o.mail_user, "a@b");
  EXPECT_EQ(o.deadline, "2030-01-01");
  EXPECT_EQ(o.licenses, "lic:2");
  EXPECT_EQ(o.mem_bind, "local");
  EXPECT_EQ(o.gpus_per_node, "a100:2");
  EXPECT_EQ(o.gpus_per_task, "1");
  EXPECT_EQ(o.other.at("wckey"), "k");
  EXPECT_EQ(o.other.at("uid"), "5");
  EXPECT_EQ(o.other.at("oversubscribe"), "");
  EXPECT_EQ(o.other.at("propagate"), "");
  EXPECT_EQ(o.other.at("get-user-env"), "10L");
  EXPECT_EQ(o.other.at("clusters"), "c1");
  EXPECT_TRUE(o.test_only && o.wait && o.quiet && o.overcommit && o.contiguous);
  EXPECT_FALSE(o.cpu_bind);  // sbatch 22.05 has no --cpu-bind
  EXPECT_EQ(error_of({"--cpu-bind=none"}), hinted("unrecognized option '--cpu-bind=none'"));
}

TEST(SbatchArgs, EveryOptionParses) {
  // Each option of the table is accepted with a plausible value.
  for (const auto& name : sbatch_long_options()) {
    if (name == "help" || name == "usage" || name == "version") continue;
    std::string value = "1";
    if (name == "kill-on-invalid-dep") value = "yes";
    if (name == "open-mode") value = "append";
    if (name == "mail-type") value = "END";
    if (name == "exclusive") value = "user";
    if (name == "no-kill") value = "off";
    if (name == "distribution") value = "block";
    std::string err = error_of({"--" + name + "=" + value});
    if (err.find("doesn't allow an argument") != std::string::npos) err = error_of({"--" + name});
    EXPECT_EQ(err, "no error") << name;
  }
  EXPECT_GE(sbatch_long_options().size(), 100u);
}

TEST(SbatchArgs, LayersOnBase) {
  SbatchOptions script = parse_sbatch_args({"-J", "fromscript", "-p", "a", "-t", "10"});
  SbatchOptions o = parse_sbatch_args({"-p", "b", "job.sh"}, script);
  EXPECT_EQ(o.job_name, "fromscript");
  EXPECT_EQ(o.partition, "b");
  EXPECT_EQ(o.time_limit_min, 10);
  EXPECT_EQ(o.script_argv, V{"job.sh"});
}

TEST(SbatchDirectives, ScanBasics) {
  std::string script =
      "#!/bin/bash\n"
      "#SBATCH -J a # comment\n"
      "\n"
      "   \t\n"
      "  # indented comment\n"
      "#SBATCH --comment=\"hello world\" -p x\n"
      "#SBATCH --time='1:00'\n"
      "#SBATCH-N 2\n"
      "#sbatch -J lower ignored\n"
      "# plain comment\n"
      "  #SBATCH --indented-ignored\n"
      "#SBATCH\n"
      "srun hostname\n"
      "#SBATCH -J after ignored\n";
  EXPECT_EQ(scan_sbatch_directives(script),
            (V{"-J", "a", "--comment=hello world", "-p", "x", "--time=1:00", "-N", "2"}));
}

TEST(SbatchDirectives, QuotingAndEscapes) {
  auto scan = [](const std::string& directive) {
    return scan_sbatch_directives("#!/bin/sh\n#SBATCH " + directive + "\ntrue\n");
  };
  // Each expectation checked against sbatch 22.05.
  EXPECT_EQ(scan("-J a#b"), (V{"-J", "a"}));
  EXPECT_EQ(scan("--comment=\"x # y\""), V{"--comment=x # y"});
  EXPECT_EQ(scan("--comment=a\\\\b"), V{"--comment=a\\b"});
  EXPECT_EQ(scan("--comment=\"a\\\"b\""), V{"--comment=a\"b"});
  EXPECT_EQ(scan("--comment='a\\b'"), V{"--comment=ab"});
  EXPECT_EQ(scan("--comment=a\"b c\"d"), V{"--comment=ab cd"});
  EXPECT_EQ(scan("--comment=a\\ b"), (V{"--comment=a", "b"}));  // escaped blank still splits
  EXPECT_EQ(scan("--comment=#x"), V{"--comment="});
  EXPECT_EQ(scan("--comment=\"a b\" # c \"d"), V{"--comment=a b"});
  EXPECT_EQ(scan("--comment=''"), V{"--comment="});
  EXPECT_EQ(scan("\t-J\ttab"), (V{"-J", "tab"}));
}

TEST(SbatchDirectives, Errors) {
  try {
    scan_sbatch_directives("#!/bin/sh\n#SBATCH --comment=\"unterminated\ntrue\n", "d.sh");
    FAIL();
  } catch (const ParseError& e) {
    EXPECT_STREQ(e.what(), "d.sh: line 2: Unmatched `\"` in [--comment=\"unterminated]");
  }
  EXPECT_THROW(scan_sbatch_directives("#!/bin/sh\n#SBATCH -J x\n#SBATCH hetjob\n"), ParseError);
  EXPECT_THROW(scan_sbatch_directives("#!/bin/sh\n#SBATCH packjob\n"), ParseError);
  // Only a separator directive counts, not the word inside a value.
  EXPECT_EQ(scan_sbatch_directives("#!/bin/sh\n#SBATCH --comment=hetjobs\n"),
            V{"--comment=hetjobs"});
}

TEST(SbatchDirectives, ParseDirectives) {
  SbatchOptions o = parse_sbatch_directives({"-J", "a", "-t", "5"});
  EXPECT_EQ(o.job_name, "a");
  EXPECT_EQ(o.time_limit_min, 5);
  try {
    parse_sbatch_directives({"-J", "a", "b"});
    FAIL();
  } catch (const ParseError& e) {
    EXPECT_STREQ(e.what(), "Invalid directive found in batch script: b");
  }
  // Directives form one argument list: a trailing -J takes the next line's first word.
  auto toks = scan_sbatch_directives("#!/bin/sh\n#SBATCH -J\n#SBATCH -p x\n");
  EXPECT_THROW(parse_sbatch_directives(toks), ParseError);
  EXPECT_THROW(parse_sbatch_directives({"-J", "x", "--", "-J", "y"}), ParseError);
  EXPECT_THROW(parse_sbatch_directives({"--foo"}), SbatchUsageError);
}

TEST(SbatchDirectives, CheckBatchScript) {
  EXPECT_NO_THROW(check_batch_script("#!/bin/sh\ntrue\n"));
  try {
    check_batch_script("\n#SBATCH -J x\n");
    FAIL();
  } catch (const ParseError& e) {
    EXPECT_EQ(format_sbatch_error(e),
              "sbatch: error: This does not look like a batch script.  The first\n"
              "sbatch: error: line must start with #! followed by the path to an interpreter.\n"
              "sbatch: error: For instance: #!/bin/sh\n");
  }
  try {
    check_batch_script("#!/bin/sh\r\ntrue\r\n");
    FAIL();
  } catch (const ParseError& e) {
    EXPECT_EQ(format_sbatch_error(e),
              "sbatch: error: Batch script contains DOS line breaks (\\r\\n)\n"
              "sbatch: error: instead of expected UNIX line breaks (\\n).\n");
  }
}

TEST(SbatchDirectives, ScriptWithNulByteRefused) {
  try {
    check_batch_script(std::string("#!/bin/sh\r\necho a\0b\n", 20));
    FAIL();
  } catch (const ParseError& e) {
    // Real sbatch's words; it checks this before DOS line breaks, after the #! line.
    EXPECT_EQ(format_sbatch_error(e),
              "sbatch: error: The Slurm controller does not allow scripts that\n"
              "sbatch: error: contain a NULL character '\\0'.\n");
  }
}

TEST(SbatchErrors, Format) {
  try {
    parse_sbatch_args({"--foo"});
  } catch (const ParseError& e) {
    EXPECT_EQ(format_sbatch_error(e),
              "sbatch: unrecognized option '--foo'\nTry \"sbatch --help\" for more information\n");
  }
  EXPECT_EQ(format_sbatch_error(ParseError("Invalid --time specification")),
            "sbatch: error: Invalid --time specification\n");
}

TEST(SbatchEnv, AppliesVariables) {
  SbatchOptions o = apply_sbatch_env({{"SBATCH_ACCOUNT", "a"},
                                      {"SBATCH_JOB_NAME", "envname"},
                                      {"SBATCH_PARTITION", "p"},
                                      {"SBATCH_TIMELIMIT", "10"},
                                      {"SBATCH_QOS", "q"},
                                      {"SBATCH_RESERVATION", "r"},
                                      {"SBATCH_MEM_PER_CPU", "2G"},
                                      {"SBATCH_MEM_PER_NODE", "4G"},
                                      {"SBATCH_EXPORT", "NONE"},
                                      {"SBATCH_ARRAY_INX", "1-3"},
                                      {"SLURM_CLUSTERS", "c"},
                                      {"UNRELATED", "x"}},
                                     {});
  EXPECT_EQ(o.account, "a");
  EXPECT_EQ(o.job_name, "envname");
  EXPECT_EQ(o.partition, "p");
  EXPECT_EQ(o.time_limit_min, 10);
  EXPECT_EQ(o.qos, "q");
  EXPECT_EQ(o.reservation, "r");
  EXPECT_EQ(o.mem_per_cpu_mb, 2048);
  EXPECT_EQ(o.mem_mb, 4096);
  EXPECT_EQ(o.export_env, "NONE");
  EXPECT_EQ(o.array, "1-3");
  EXPECT_EQ(o.other.at("clusters"), "c");
}

TEST(SbatchEnv, Flags) {
  auto with = [](const char* var, const char* value) {
    return apply_sbatch_env({{var, value}}, {});
  };
  EXPECT_TRUE(with("SBATCH_WAIT", "").wait);
  EXPECT_TRUE(with("SBATCH_WAIT", "yes").wait);
  EXPECT_TRUE(with("SBATCH_WAIT", "2").wait);
  EXPECT_FALSE(with("SBATCH_WAIT", "0").wait);
  EXPECT_FALSE(with("SBATCH_WAIT", "no").wait);
  EXPECT_FALSE(with("SBATCH_WAIT", "bogus").wait);
  EXPECT_TRUE(with("SBATCH_EXCLUSIVE", "").exclusive);
  EXPECT_EQ(with("SBATCH_EXCLUSIVE", "user").other.at("exclusive"), "user");
  EXPECT_TRUE(with("SBATCH_REQUEUE", "").requeue);
  SbatchOptions nr = with("SBATCH_NO_REQUEUE", "1");
  EXPECT_TRUE(nr.requeue_set);
  EXPECT_FALSE(nr.requeue);
  EXPECT_TRUE(with("SBATCH_OVERCOMMIT", "yes").overcommit);
  EXPECT_EQ(with("SBATCH_DEBUG", "1").verbose, 1);
  EXPECT_EQ(with("SBATCH_DEBUG", "0").verbose, 0);
  EXPECT_EQ(with("SBATCH_NO_KILL", "off").other.at("no-kill"), "off");
  SbatchOptions sw =
      apply_sbatch_env({{"SBATCH_REQ_SWITCH", "2"}, {"SBATCH_WAIT4SWITCH", "10"}}, {});
  EXPECT_EQ(sw.other.at("switches"), "2@10");
}

TEST(SbatchEnv, ErrorsAndLayering) {
  EXPECT_THROW(apply_sbatch_env({{"SBATCH_TIMELIMIT", "bad"}}, {}), ParseError);
  try {
    apply_sbatch_env({{"SBATCH_MEM_PER_CPU", "bad"}}, {});
    FAIL();
  } catch (const ParseError& e) {
    EXPECT_STREQ(e.what(), "Invalid --mem-per-cpu specification");
  }
  EXPECT_THROW(apply_sbatch_env({{"SBATCH_EXCLUSIVE", "no"}}, {}), ParseError);
  // script < env < command line
  SbatchOptions script = parse_sbatch_directives({"-J", "s", "-p", "sp", "-A", "sa"});
  SbatchOptions env =
      apply_sbatch_env({{"SBATCH_PARTITION", "ep"}, {"SBATCH_ACCOUNT", "ea"}}, script);
  SbatchOptions cli = parse_sbatch_args({"-A", "ca", "job.sh"}, env);
  EXPECT_EQ(cli.job_name, "s");
  EXPECT_EQ(cli.partition, "ep");
  EXPECT_EQ(cli.account, "ca");
}
