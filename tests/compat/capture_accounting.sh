#!/usr/bin/env bash
# Capture golden outputs of real Slurm 22.05's sacctmgr and sreport (slurmdbd on MariaDB).
#
# usage: tests/compat/capture_accounting.sh [GOLDEN_DIR]   (default: tests/compat/golden/accounting)
#
# Starts a fresh oracle with accounting (tests/compat/oracle/up --accounting: a private MariaDB
# and slurmdbd; 2 nodes x 2 CPUs x 1000 MB, one GPU each, AccountingStorageTRES=gres/gpu) in
# /tmp/drover-oracle-acct, runs the scenario below in order and writes, for every capture NAME:
#   GOLDEN_DIR/NAME/cmd      the exact command line
#   GOLDEN_DIR/NAME/user     only when not run as root: the user who ran it
#   GOLDEN_DIR/NAME/stdin    only when something was piped in (the answer to sacctmgr's prompt)
#   GOLDEN_DIR/NAME/now      when it ran (Unix seconds): sreport's default window depends on it
#   GOLDEN_DIR/NAME/stdout   exact stdout bytes
#   GOLDEN_DIR/NAME/stderr   exact stderr bytes
#   GOLDEN_DIR/NAME/rc       exit status
# and GOLDEN_DIR/INDEX.txt, the captures in order.  GOLDEN_DIR/jobs.txt records the jobs the
# sreport phase is about (user, account, CPUs, GPUs, eligible/start/end times).
#
# sreport reads slurmdbd's hourly rollups, and the hour in progress is never rolled up. So the
# sreport phase runs real jobs, then moves their times (and the cluster's registration) into
# yesterday in the database, and restarts slurmdbd with its rollup times reset, which makes it
# roll those hours up again: the reports are real sreport output over real slurmdbd rollups of
# those jobs at known times. Commands run in /tmp/drover-oracle-work with a clean environment
# (env -i PATH HOME LANG=C TZ=UTC SLURM_CONF). Requires root, slurm-wlm, slurmdbd,
# mariadb-server, munge and user drovertest (created if missing). Takes about a minute.
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
GOLD=${1:-$HERE/golden/accounting}
DIR=/tmp/drover-oracle-acct
WORK=/tmp/drover-oracle-work
OTHER=drovertest

. "$HERE/capture_lib.sh"
prepare_capture "$DIR" jobs.txt

"$HERE/oracle/up" "$DIR" --accounting --nodes 2 --cpus 2 --mem 1000 \
  --node-extra "Gres=gpu:1 " --gres-conf "Name=gpu File=/dev/null" \
  --set GresTypes=gpu --set AccountingStorageTRES=gres/gpu || exit 1
export SLURM_CONF=$DIR/slurm.conf
export TZ=UTC
trap '"$HERE/oracle/down" "$DIR"' EXIT

sql() { mariadb --no-defaults -uroot --socket="$DIR/run/mysql.sock" -N slurm_acct_db -e "$*"; }

INDEX=$GOLD/INDEX.txt
NCAP=0
{ echo "# sacctmgr and sreport captures in the order they were taken (capture_accounting.sh)."
  echo "# NNN NAME [as USER] [stdin TEXT] rc=EXIT, then the command line."; } >"$INDEX"

########################################################################
log "phase 1: a fresh database (slurmctld registered cluster oracle)"
cap acct_show_assoc_fresh      'sacctmgr show assoc'
cap acct_show_account_fresh    'sacctmgr show account'
cap acct_show_user_fresh       'sacctmgr show user'
cap acct_show_qos_fresh        'sacctmgr show qos'
cap acct_list_assoc_P_fresh    'sacctmgr list associations -P'

log "phase 2: adding accounts, users and QOS"
cap acct_add_account           'sacctmgr -i add account physics Description="physics dept" Organization=sci'
cap acct_add_account_case      'sacctmgr -i add account Lab Description="The LAB" Organization=Sci'
cap acct_add_account_again     'sacctmgr -i add account physics'
cap acct_add_accounts_parent   'sacctmgr -i add account chem,bio parent=physics fairshare=5 GrpJobs=3'
cap acct_add_account_bad_parent 'sacctmgr -i add account zz parent=nosuch'
cap acct_add_account_bad_option 'sacctmgr -i add account zz bogus=1'
cap acct_add_account_prompt_n  --stdin $'n\n' 'sacctmgr add account theory parent=physics'
cap acct_add_account_prompt_y  --stdin $'y\n' 'sacctmgr add account theory parent=physics MaxJobs=4 MaxWall=1:00:00 GrpTRES=cpu=8'
cap acct_add_user              'sacctmgr -i add user alice account=physics'
cap acct_add_user_again        'sacctmgr -i add user alice account=physics'
cap acct_add_user_second_assoc 'sacctmgr -i add user alice account=chem maxjobs=2'
cap acct_add_user_no_account   'sacctmgr -i add user carol'
cap acct_add_user_bad_account  'sacctmgr -i add user bob account=nosuch'
cap acct_add_user_full         'sacctmgr -i add user bob account=chem,physics defaultaccount=chem adminlevel=Operator fairshare=3 MaxSubmitJobs=10'
cap acct_add_user_partition    'sacctmgr -i add user dave account=bio partition=debug'
cap acct_add_user_accounts_order 'sacctmgr -i add user erin account=lab,bio,chem'
cap acct_add_qos_prompt_y      --stdin $'y\n' 'sacctmgr add qos high priority=100 MaxWall=60'
cap acct_add_qos_prompt_n      --stdin $'n\n' 'sacctmgr add qos low'
# (Not captured: with stdin at end of file 22.05's sacctmgr never stops asking; it spins.)
cap acct_add_qos_again         'sacctmgr -i add qos normal'
cap acct_add_qos_limits        'sacctmgr -i add qos gpu Flags=DenyOnLimit MaxTRESPerUser=gres/gpu=1 GrpJobs=4 MaxJobsPerUser=2 Description="gpu jobs"'

log "phase 3: listing"
cap acct_show_assoc            'sacctmgr show assoc'
cap acct_show_assoc_P          'sacctmgr show assoc -P'
cap acct_show_assoc_p          'sacctmgr show assoc -p'
cap acct_show_assoc_n          'sacctmgr -n show assoc format=account,user'
cap acct_show_assoc_format     'sacctmgr show assoc format=account,user,partition,share,maxjobs,grpjobs,grptres,maxwall,qos,defaultqos'
cap acct_show_assoc_width      'sacctmgr show assoc format=account%-20,user%5,share%3'
cap acct_show_assoc_tree       'sacctmgr show assoc tree format=account,user,share,parentname'
cap acct_show_assoc_users      'sacctmgr show assoc where users=alice format=account,user,maxjobs'
cap acct_show_assoc_accounts   'sacctmgr show assoc accounts=chem,bio format=account,user'
cap acct_show_assoc_ids        'sacctmgr show assoc format=id,account,user,parentid,parentname -P'
cap acct_show_account          'sacctmgr show account'
cap acct_show_account_P        'sacctmgr -P show account'
cap acct_show_account_one      'sacctmgr show account physics'
cap acct_show_account_withassoc 'sacctmgr show account withassoc'
cap acct_show_account_where    'sacctmgr show account where name=chem,bio format=account,descr'
cap acct_show_user             'sacctmgr show user'
cap acct_show_user_one         'sacctmgr show user bob'
cap acct_show_user_withassoc   'sacctmgr show user withassoc'
cap acct_show_user_p           'sacctmgr -p show user format=user,defaultaccount,adminlevel'
cap acct_show_qos              'sacctmgr show qos'
cap acct_show_qos_P            'sacctmgr -P show qos'
cap acct_show_qos_format       'sacctmgr show qos format=name,priority,maxwall,flags,maxtrespu,grpjobs,maxjobspu,description'
cap acct_show_qos_one          'sacctmgr show qos where name=high format=name,priority'
cap acct_show_bogus            'sacctmgr show bogus'
cap acct_show_bad_format       'sacctmgr show assoc format=nosuch'
cap acct_bogus_command         'sacctmgr bogus'

log "phase 4: modifying"
cap acct_modify_account_prompt_y --stdin $'y\n' 'sacctmgr modify account physics set GrpJobs=4'
cap acct_modify_user_prompt_n  --stdin $'n\n' 'sacctmgr modify user alice set MaxJobs=7'
cap acct_modify_user_where     'sacctmgr -i modify user where name=alice account=chem set MaxJobs=3 qos+=high'
cap acct_modify_user_nomatch   'sacctmgr -i modify user where name=nobody set MaxJobs=3'
cap acct_modify_nothing_to_set 'sacctmgr -i modify account physics'
cap acct_modify_bad_option     'sacctmgr -i modify account where name=physics set nosuch=1'
cap acct_modify_account_descr  'sacctmgr -i modify account chem set description=Chemistry'
cap acct_modify_account_both   'sacctmgr -i modify account where name=bio set description=Biology organization=lifesci fairshare=7'
cap acct_modify_user_admin     'sacctmgr -i modify user bob set adminlevel=None'
cap acct_modify_user_defacct   'sacctmgr -i modify user where name=bob set defaultaccount=physics'
cap acct_modify_qos            'sacctmgr -i modify qos high set MaxWall=2:00:00 Priority=50'
cap acct_modify_qos_nomatch    'sacctmgr -i modify qos where name=nosuch set Priority=5'
cap acct_modify_clear_limit    'sacctmgr -i modify account where name=theory set MaxJobs=-1 GrpTRES=cpu=-1'
cap acct_show_assoc_modified   'sacctmgr show assoc format=account,user,share,grpjobs,grptres,maxjobs,maxwall,qos'
cap acct_show_qos_modified     'sacctmgr show qos format=name,priority,maxwall'

log "phase 5: who may change things"
cap acct_add_account_denied    --as "$OTHER" 'sacctmgr -i add account foo'
cap acct_modify_denied         --as "$OTHER" 'sacctmgr -i modify account physics set GrpJobs=1'
cap acct_delete_denied         --as "$OTHER" 'sacctmgr -i delete account bio'
cap acct_show_as_user          --as "$OTHER" 'sacctmgr show assoc format=account,user'
cap acct_make_operator         "sacctmgr -i add user $OTHER account=physics adminlevel=Operator"
cap acct_add_account_operator  --as "$OTHER" 'sacctmgr -i add account ops'

log "phase 6: deleting"
cap acct_sbatch_in_theory      'sacctmgr -i add user root account=theory && sbatch -A theory --wrap "sleep 300" -o /dev/null'
# slurmdbd hears of the job a moment later; until then it would let the account go.
for _ in $(seq 50); do [[ -n $(sacct -n -X -A theory -o jobid 2>/dev/null) ]] && break; sleep 0.2; done
cap acct_delete_account_busy   'sacctmgr -i delete account theory'
cap acct_delete_user_busy      'sacctmgr -i delete user root where account=theory'
cap acct_scancel               'scancel -A theory; sleep 2'
cap acct_delete_user_assoc     'sacctmgr -i delete user where name=alice account=chem'
cap acct_delete_user_nomatch   'sacctmgr -i delete user nosuch'
cap acct_delete_user_all       'sacctmgr -i delete user erin'
cap acct_modify_user_bad_defacct 'sacctmgr -i modify user bob set defaultaccount=nosuch'
cap acct_delete_account        'sacctmgr -i delete account ops'
cap acct_delete_account_nomatch 'sacctmgr -i delete account nosuch'
cap acct_delete_qos            'sacctmgr -i delete qos gpu'
cap acct_delete_account_prompt_n --stdin $'n\n' 'sacctmgr delete account bio'
cap acct_delete_account_tree   'sacctmgr -i delete account physics'
cap acct_show_assoc_deleted    'sacctmgr show assoc format=account,user,partition'
cap acct_show_account_deleted  'sacctmgr show account'
cap acct_show_user_deleted     'sacctmgr show user'

########################################################################
log "phase 7: usage for sreport (jobs run, then moved to yesterday)"
# The accounts: physics (root, drovertest) with sub-account theory (root); chem (drovertest).
sacctmgr -i add account physics,chem >/dev/null
sacctmgr -i add account theory parent=physics >/dev/null
sacctmgr -i add user root account=physics,theory >/dev/null
sacctmgr -i add user "$OTHER" account=physics,chem defaultaccount=physics >/dev/null
sacctmgr -i add account idle parent=chem >/dev/null   # no jobs: not in the reports
sacctmgr -i add user "$OTHER" account=idle >/dev/null
sub() { # sub USER ARGS... -> job id
  local user=$1; shift
  STDIN=
  runas "$user" "sbatch --parsable -o /dev/null $* --wrap 'sleep 1'"
}
J1=$(sub root -A physics -n 2)
J2=$(sub "$OTHER" -A physics -n 1)
J3=$(sub "$OTHER" -A chem -n 1 --gres=gpu:1)
J4=$(sub root -A theory -n 4 -N 2)
for _ in $(seq 60); do [[ -z $(squeue -h) ]] && break; sleep 1; done
[[ -z $(squeue -h) ]] || { echo "capture: jobs did not finish" >&2; squeue >&2; exit 1; }
sleep 2
TODAY=$(date -u -d 'today 00:00' +%s)
Y=$((TODAY - 86400))
# set_times JOB ELIGIBLE START END (seconds after yesterday's midnight)
set_times() {
  local j=$1 e=$((Y + $2)) s=$((Y + $3)) t=$((Y + $4))
  sql "UPDATE oracle_job_table SET time_submit=$e, time_eligible=$e, time_start=$s, time_end=$t WHERE id_job=$1"
  sql "UPDATE oracle_step_table s JOIN oracle_job_table j ON s.job_db_inx=j.job_db_inx SET s.time_start=$s, s.time_end=$t WHERE j.id_job=$1"
  printf '%s\n' "$(sql "SELECT j.id_job, a.user, a.acct, j.tres_alloc, j.time_eligible, j.time_start, j.time_end FROM oracle_job_table j JOIN oracle_assoc_table a ON a.id_assoc=j.id_assoc WHERE j.id_job=$1")" >>"$GOLD/jobs.txt"
}
echo "# id_job user account tres_alloc(1=cpu,2=mem,4=node,5=billing,1001=gres/gpu) eligible start end (yesterday = $Y)" >"$GOLD/jobs.txt"
set_times "$J1" 3600 3600 10800        # 01:00-03:00, 2 CPUs
set_times "$J2" 7200 7200 9000         # 02:00-02:30, 1 CPU
set_times "$J3" 18000 18000 21600      # 05:00-06:00, 1 CPU + 1 GPU
set_times "$J4" 32400 36000 41400      # eligible 09:00, 10:00-11:30, 4 CPUs on 2 nodes
# The cluster (4 CPUs, 2 GPUs) registered two days ago; rollups start over from then.
sql "UPDATE oracle_event_table SET time_start=$((Y - 86400)) WHERE node_name='' AND time_end=0"
sql "DELETE FROM oracle_usage_hour_table; DELETE FROM oracle_usage_day_table; DELETE FROM oracle_usage_month_table;
     DELETE FROM oracle_assoc_usage_hour_table; DELETE FROM oracle_assoc_usage_day_table; DELETE FROM oracle_assoc_usage_month_table;
     DELETE FROM oracle_last_ran_table;
     INSERT INTO oracle_last_ran_table (hourly_rollup, daily_rollup, monthly_rollup) VALUES ($((Y - 86400)), $((Y - 86400)), $((Y - 86400)))"
pid=$(cat "$DIR/run/slurmdbd.pid")
kill "$pid"; for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
slurmdbd
HOUR=$(( $(date +%s) / 3600 * 3600 ))
for _ in $(seq 120); do
  lr=$(sql "SELECT hourly_rollup FROM oracle_last_ran_table" 2>/dev/null)
  [[ -n $lr && $lr -ge $HOUR ]] && break
  sleep 0.5
done
[[ -n $lr && $lr -ge $HOUR ]] || { echo "capture: slurmdbd did not roll up (last ran $lr)" >&2; exit 1; }
sleep 1
YD=$(date -u -d "@$Y" +%F)

log "phase 8: sreport"
cap sreport_cluster_util          'sreport cluster utilization'
cap sreport_cluster_util_P        'sreport -P cluster utilization'
cap sreport_cluster_util_p        'sreport -p cluster utilization'
cap sreport_cluster_util_n        'sreport -n cluster utilization'
cap sreport_cluster_util_hours    'sreport -t hours cluster utilization'
cap sreport_cluster_util_seconds  'sreport -t seconds cluster utilization'
cap sreport_cluster_util_percent  'sreport -t percent cluster utilization'
cap sreport_cluster_util_minper   'sreport -t minper cluster utilization'
cap sreport_cluster_util_window   "sreport cluster utilization start=${YD}T01:00:00 end=${YD}T04:00:00"
cap sreport_cluster_util_gpu      'sreport cluster utilization -T gres/gpu'
cap sreport_cluster_util_cpu_gpu  'sreport -P cluster utilization -T cpu,gres/gpu'
cap sreport_cluster_util_format   'sreport cluster utilization format=cluster,allocated,reported,overcommitted,trescount'
cap sreport_cluster_util_empty    "sreport cluster utilization start=$(date -u -d "@$((Y - 86400))" +%F) end=${YD}"
cap sreport_acct_user             'sreport cluster AccountUtilizationByUser'
cap sreport_acct_user_P           'sreport -P cluster AccountUtilizationByUser'
cap sreport_acct_user_tree        'sreport cluster AccountUtilizationByUser tree'
cap sreport_acct_user_hours       'sreport -t hours cluster AccountUtilizationByUser'
cap sreport_acct_user_percent     'sreport -t percent cluster AccountUtilizationByUser'
cap sreport_acct_user_accounts    'sreport cluster AccountUtilizationByUser accounts=physics'
cap sreport_acct_user_gpu         'sreport cluster AccountUtilizationByUser -T gres/gpu'
cap sreport_acct_user_cpu         'sreport cluster AccountUtilizationByUser -T cpu'
cap sreport_acct_user_cpu_gpu     'sreport -P cluster AccountUtilizationByUser -T cpu,gres/gpu'
cap sreport_acct_user_window      "sreport -P cluster AccountUtilizationByUser start=${YD}T02:00:00 end=${YD}T03:00:00"
cap sreport_top_usage             'sreport user topusage'
cap sreport_top_usage_P           'sreport -P user topusage'
cap sreport_top_usage_n           'sreport -n -P user topusage'
cap sreport_top_usage_count       'sreport user topusage topcount=1'
cap sreport_top_usage_group       'sreport user topusage group'
cap sreport_top_usage_hours       'sreport -t hours user topusage'
cap sreport_top_usage_percent     'sreport -t percent user topusage'
cap sreport_top_usage_gpu         'sreport user topusage -T gres/gpu'
cap sreport_top_usage_cpu_gpu     'sreport -P user topusage -T cpu,gres/gpu'
cap sreport_top_usage_users       "sreport user topusage users=$OTHER"
cap sreport_bad_report            'sreport cluster bogus'
cap sreport_bad_time_format       'sreport -t bogus cluster utilization'

echo "captured $NCAP outputs into $GOLD" >&2
