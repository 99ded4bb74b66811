#!/usr/bin/env bash
# Capture golden outputs of real Slurm 22.05's sacct (slurmdbd on MariaDB).
#
# usage: tests/compat/capture_sacct.sh [GOLDEN_DIR]   (default: tests/compat/golden/sacct)
#
# Starts a fresh oracle with accounting, as capture_accounting.sh does (2 nodes x 2 CPUs x
# 1000 MB, one GPU each), in /tmp/drover-oracle-sacct, runs real jobs that end in every way
# sacct tells apart (completed, failed, killed by a signal, cancelled pending and running,
# timed out, requeued, srun steps, an array), then captures sacct over them. Each capture is a
# directory as in capture_lib.sh (cmd, user, now, stdout, stderr, rc); INDEX.txt lists them in
# order. GOLDEN_DIR/jobs.tsv and steps.tsv are slurmdbd's job and step tables as they stood
# (MariaDB's --batch TSV: a header line, NULL for null, \t \n \\ escaped), tres.tsv its TRES
# ids, and names.txt says which job is which ("job ID WHAT") and names the user, group, QOS and
# reason ids ("user UID NAME", ...): drover's golden test (src/cli/tests/sacct_golden_test.cpp)
# builds the same records from them. Commands run in /tmp/drover-oracle-work with TZ=UTC and a
# clean environment. Requires root, slurm-wlm, slurmdbd, mariadb-server, munge; takes about
# five minutes (a job times out, a requeued one waits two minutes to run again).
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
GOLD=${1:-$HERE/golden/sacct}
DIR=/tmp/drover-oracle-sacct
WORK=/tmp/drover-oracle-work
OTHER=drovertest

. "$HERE/capture_lib.sh"
prepare_capture "$DIR" jobs.tsv steps.tsv names.txt

"$HERE/oracle/up" "$DIR" --accounting --nodes 2 --cpus 2 --mem 1000 \
  --node-extra "Gres=gpu:1 " --gres-conf "Name=gpu File=/dev/null" \
  --set GresTypes=gpu --set AccountingStorageTRES=gres/gpu || exit 1
export SLURM_CONF=$DIR/slurm.conf
export TZ=UTC
trap '"$HERE/oracle/down" "$DIR"' EXIT

sql() { mariadb --no-defaults -uroot --socket="$DIR/run/mysql.sock" --batch slurm_acct_db -e "$*"; }

INDEX=$GOLD/INDEX.txt
NCAP=0
{ echo "# sacct captures in the order they were taken (capture_sacct.sh)."
  echo "# NNN NAME [as USER] rc=EXIT, then the command line."; } >"$INDEX"

# state JOB: the controller's state of a job
state() { scontrol show job "$1" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p'; }
# wait_state JOB STATE... (up to 300 s: a requeued job waits two minutes to be eligible again)
wait_state() {
  local j=$1; shift
  for _ in $(seq 600); do
    local s; s=$(state "$j")
    for want in "$@"; do [[ $s == "$want" ]] && return 0; done
    sleep 0.5
  done
  echo "capture: job $j never reached $* (is $(state "$j"))" >&2; exit 1
}
sub() { # sub USER ARGS... -> job id
  local user=$1; shift
  STDIN=
  runas "$user" "sbatch --parsable -o /dev/null $*"
}

########################################################################
log "phase 1: the jobs (not captured themselves; names.txt)"
sacctmgr -i add account physics >/dev/null
sacctmgr -i add user "$OTHER" account=physics >/dev/null
: >"$GOLD/names.txt"
name() { printf 'job %s %s\n' "$2" "$1" >>"$GOLD/names.txt"; }  # job ID WHAT

TO=$(sub root -J to -t 1 --wrap "'sleep 300'");                 name timeout "$TO"
OK=$(sub root -J ok --wrap "'sleep 2'");                        name completed "$OK"
FAIL=$(sub root -J fail --wrap "'exit 3'");                     name failed "$FAIL"
SIG=$(sub root -J sig --wrap "'kill -9 \$\$'");                 name signal "$SIG"
STEPS=$(sub root -J steps -n 2 --wrap "'srun hostname >/dev/null; srun -n 1 -J second bash -c \"exit 2\"; srun -n 1 bash -c \"kill -9 \\\$\\\$\"; exit 0'")
name steps "$STEPS"
PEND=$(sub root -J pend -H --wrap "'sleep 1'");                 name cancelled_pending "$PEND"
RUN=$(sub "$OTHER" -J run --wrap "'sleep 300'");                name cancelled_running "$RUN"
ARR=$(sub "$OTHER" -J arr --array=1-3 --wrap "'sleep 1'");      name array "$ARR"
RQ=$(sub root -J rq --requeue --wrap "'sleep 4'");              name requeued "$RQ"
GPU=$(sub "$OTHER" -J gpu -N 2 -n 2 --gres=gpu:1 --mem=100 --wrap "'sleep 1'"); name gpu "$GPU"
# CPU time (does jobacct_gather/none record any?): dd in a step and in the batch shell
BURN=$(sub root -J burn --wrap "'srun dd if=/dev/zero of=/dev/null bs=1M count=3000 2>/dev/null; dd if=/dev/zero of=/dev/null bs=1M count=3000 2>/dev/null'")
name burn "$BURN"

wait_state "$RQ" RUNNING
sleep 1
scontrol requeue "$RQ"
wait_state "$RUN" RUNNING
runas "$OTHER" "scancel $RUN"
scancel "$PEND"
for j in "$OK" "$FAIL" "$SIG" "$STEPS" "$RQ" "$GPU" "$BURN"; do wait_state "$j" COMPLETED FAILED; done
wait_state "$TO" TIMEOUT
for _ in $(seq 60); do [[ -z $(squeue -h) ]] && break; sleep 1; done
[[ -z $(squeue -h) ]] || { echo "capture: jobs did not finish" >&2; squeue >&2; exit 1; }
sleep 3   # slurmdbd hears of the last ends a moment later
sql "SELECT * FROM oracle_job_table ORDER BY job_db_inx" >"$GOLD/jobs.tsv"
sql "SELECT s.*, j.id_job FROM oracle_step_table s JOIN oracle_job_table j ON s.job_db_inx=j.job_db_inx ORDER BY s.job_db_inx, s.id_step" >"$GOLD/steps.tsv"
sql "SELECT id, type, name FROM tres_table" >"$GOLD/tres.tsv"
# Who the ids are (the test has no such users), and the names of the reason codes seen
# (Slurm's enum job_state_reason: WAIT_NO_REASON, WAIT_TIME, WAIT_HELD_USER).
for u in root "$OTHER"; do
  echo "user $(id -u "$u") $u" >>"$GOLD/names.txt"
  echo "group $(id -g "$u") $(id -gn "$u")" >>"$GOLD/names.txt"
done
sql "SELECT id, name FROM qos_table" | tail -n +2 | tr '\t' ' ' | sed 's/^/qos /' >>"$GOLD/names.txt"
printf 'reason 0 None\nreason 9 BeginTime\nreason 16 JobHeldUser\n' >>"$GOLD/names.txt"
T_START=$(date -u -d "@$(sql "SELECT time_start FROM oracle_job_table WHERE id_job=$FAIL" | tail -n 1)" +%FT%T)
T_END=$(date -u -d "@$(sql "SELECT time_end FROM oracle_job_table WHERE id_job=$STEPS" | tail -n 1)" +%FT%T)

########################################################################
log "phase 2: sacct"
cap sacct_default          'sacct'
cap sacct_brief            'sacct -b'
cap sacct_long             'sacct -l'
cap sacct_long_X_P         'sacct --long -X -P'
cap sacct_parsable         'sacct -p'
cap sacct_parsable2        'sacct -P'
cap sacct_noheader         'sacct -n'
cap sacct_allocations      'sacct -X'
cap sacct_duplicates       'sacct -D'
cap sacct_duplicates_X_P   'sacct -D -X -P -o jobid,jobname,state,exitcode,submit,eligible,start,end,elapsed,reason'
cap sacct_duplicates_j     "sacct -D -j $RQ"
cap sacct_requeued_j       "sacct -j $RQ -o jobid,state,submit,eligible,start,end,elapsed"
cap sacct_pending_j        "sacct -j $PEND"
cap sacct_pending_fields   "sacct -j $PEND -o jobid,state,reason,submit,eligible,start,end,elapsed,alloccpus,nnodes,nodelist,timelimit,reqmem,alloctres"
cap sacct_long_j           "sacct -l -j $STEPS"
cap sacct_all_P            "sacct -P -o ALL -j $STEPS"
cap sacct_widths           'sacct -o jobid%20,jobname%-15,state%25,exitcode,derivedexitcode%5,elapsed%3'
cap sacct_times            'sacct -o jobid,submit,eligible,start,end,elapsed,elapsedraw,timelimit,timelimitraw,suspended'
cap sacct_ids              'sacct -o jobid,jobidraw,jobname%12,user,uid,group,gid,account,partition,qos,priority'
cap sacct_alloc            'sacct -o jobid,alloccpus,ncpus,reqcpus,allocnodes,nnodes,reqnodes,nodelist,ntasks,reqmem'
cap sacct_tres             'sacct -P -o jobid,reqtres,alloctres'
cap sacct_exit             'sacct -o jobid,state,exitcode,derivedexitcode,reason%25'
cap sacct_stats            'sacct -P -o jobid,totalcpu,usercpu,systemcpu,cputime,cputimeraw,maxrss,maxrssnode,maxrsstask,averss,maxvmsize,avevmsize,avecpu,mincpu,consumedenergy,avediskread,maxdiskwrite'
cap sacct_misc             'sacct -P -o jobid,cluster,workdir,comment,admincomment,wckey,reservation,constraints,flags,submitline'
cap sacct_j_steps          "sacct -j $STEPS"
cap sacct_j_step0          "sacct -j $STEPS.0"
cap sacct_j_batch          "sacct -j $STEPS.batch,$STEPS.1"
cap sacct_j_array          "sacct -j $ARR"
cap sacct_j_array_task     "sacct -j ${ARR}_2"
cap sacct_j_several        "sacct -X -j $OK,$FAIL"
cap sacct_j_bad            'sacct -j abc'
cap sacct_u_other          "sacct -u $OTHER"
cap sacct_as_other         --as "$OTHER" 'sacct'
cap sacct_as_other_a       --as "$OTHER" 'sacct -a -X'
cap sacct_states           'sacct -s CD,F'
cap sacct_states_ca        'sacct -X -s CA,TO'
cap sacct_states_r         'sacct -s R'
cap sacct_states_since     "sacct -X -s CA,TO,F -S $T_START"
cap sacct_states_steps     "sacct -s CD -S $T_START -E now"
cap sacct_window           "sacct -X -S $T_START -E $T_END"
cap sacct_window_states    "sacct -X -s CD -S $T_START -E $T_END"
cap sacct_nodes            'sacct -N node2'
cap sacct_partition        'sacct -X -r debug'
cap sacct_account          'sacct -X -A physics'
cap sacct_name             'sacct --name=ok,fail'
cap sacct_env_format       'SACCT_FORMAT=jobid,state,elapsed,nodelist%20 sacct -X'
cap sacct_env_and_o        'SACCT_FORMAT=jobid,state sacct -X -o jobid,jobname'
cap sacct_bad_field        'sacct -o jobid,bogus'
cap sacct_bad_state        'sacct -s XX'
cap sacct_helpformat       'sacct --helpformat'
cap sacct_e                'sacct -e'
cap sacct_json             "sacct --json -j $STEPS"
cap sacct_json_X           "sacct --json -X -j $OK"

echo "captured $NCAP outputs into $GOLD" >&2
