# Helper library for the oracle diff scenarios (tests/compat/scenarios/*.sh).
#
# The runner (tests/compat/harness/run) sources this file and then one scenario, once
# against real Slurm and once against drover, each in a fresh work directory (the current
# directory) with that side's sbatch/squeue/scontrol/scancel first on PATH. Everything a
# scenario wants compared goes into the transcript ($COMPAT_TRANSCRIPT) through these
# helpers; the runner normalises both transcripts (normalise.py) and diffs them.
#
# Scenarios must not look at which side they run on: they describe what a user does.
#
#   script NAME <<'EOF' ... EOF    write an executable job script NAME (not listed by show_outputs)
#   file NAME <<'EOF' ... EOF      write a plain input file NAME (not listed by show_outputs)
#   run CMD ARGS...                run a command; record its command line, stdout ("| "),
#                                  stderr ("! ") and exit status; sets OUT, ERR, RC; when CMD
#                                  (or `env ... sbatch`) is sbatch, sets J to the job id it
#                                  printed ("Submitted batch job N" or --parsable), for salloc
#                                  the N of "salloc: Granted job allocation N", else J=""
#                                  a command with an empty argument is not run but recorded as
#                                  skipped (an empty "$J" after a failed sbatch)
#   run_literal CMD ARGS...        run even with empty arguments (sbatch -p "")
#   run_sorted CMD ARGS...         like run, but its stdout and its stderr lines are each sorted
#                                  (LC_ALL=C) before they are recorded: for srun/salloc, whose
#                                  tasks on several nodes write in no fixed order
#   run_as USER CMD ARGS...        the same as another user (runuser), reaching the same cluster
#   submit ARGS...                 run sbatch ARGS... (J = the new job's id)
#   submit_as USER ARGS...         the same as another user
#   quiet CMD ARGS...              run without recording (sets OUT, ERR, RC)
#   wait_done ID [TIMEOUT]         poll until the job (every task of an array) has finished
#   wait_state ID STATE [TIMEOUT]  poll until JobState is STATE (alternatives: "A|B")
#   wait_field ID KEY VALUE [TIMEOUT]  poll until scontrol's KEY=VALUE for the job (first record)
#   wait_queue_empty [TIMEOUT]     poll until squeue shows no job at all
#   wait_nodes_responding [TIMEOUT]  poll until sinfo marks no node with '*' (not responding)
#   wait_step STEPID [TIMEOUT]     poll until `squeue -s` lists the step (J.0, J.batch) running
#   fields ID KEY...               record KEY=VALUE for each record `scontrol -o show job ID` prints
#   field ID KEY                   print (not record) the value of KEY (first record)
#   show_file PATH...              record a file's contents (or that it does not exist)
#   show_outputs                   record every file in the work dir not written by script/file
#   show_env FILE [NAME...]        record the SLURM*/SBATCH_*/ENVIRONMENT variables (and NAMEs)
#                                  of an `env` dump a job wrote to FILE, sorted
#   note TEXT                      record a line of text
#   pause SECONDS                  sleep (use only where Slurm's own timing needs it; say why)
#   time_gap ID KEY REF GRAIN      record KEY - REF (REF: "now" or a key) in seconds, rounded
#
# Time-outs are recorded ("# TIMEOUT ...") so they show up in the diff.

T=${COMPAT_TRANSCRIPT:?runner must set COMPAT_TRANSCRIPT}
_TMP=${COMPAT_TMP:?runner must set COMPAT_TMP}
_HARNESS=${COMPAT_HARNESS:?runner must set COMPAT_HARNESS}
OTHER_USER=${COMPAT_OTHER_USER:-drovertest}
# keep the harness's own variables out of the jobs' environment
export -n COMPAT_TRANSCRIPT COMPAT_TMP COMPAT_HARNESS COMPAT_OTHER_USER
_INPUTS=$_TMP/inputs
: >"$_INPUTS"
J=""
OUT=""
ERR=""
RC=0

_rec() { printf '%s\n' "$*" >>"$T"; }
note() { _rec "# $*"; }

# Quote an argument the way a user would type it (only when needed), deterministically.
_q() {
  local a=$1
  if [[ -n $a && $a =~ ^[A-Za-z0-9_./:=,%@+^-]+$ ]]; then
    printf '%s' "$a"
  else
    printf "'%s'" "${a//\'/\'\\\'\'}"
  fi
}
_cmdline() {
  local s="" a
  for a in "$@"; do s+=" $(_q "$a")"; done
  printf '%s' "${s# }"
}

# Environment handed to commands run as another user (runuser keeps little else).
_user_env() {
  local v
  for v in PATH SLURM_CONF DROVER_SOCKET DROVER_STATE_DIR LANG TZ; do
    [[ -n ${!v:-} ]] && printf '%s\n' "$v=${!v}"
  done
}

_exec() {  # _exec USER CMD... : run, capturing OUT ERR RC (stdin is the caller's)
  local user=$1
  shift
  if [[ -n $user ]]; then
    local -a envs
    mapfile -t envs < <(_user_env)
    runuser -u "$user" -- env -i HOME="$(getent passwd "$user" | cut -d: -f6)" USER="$user" \
      LOGNAME="$user" SHELL=/bin/sh "${envs[@]}" "$@" >"$_TMP/out" 2>"$_TMP/err"
  else
    "$@" >"$_TMP/out" 2>"$_TMP/err"
  fi
  RC=$?
  OUT=$(cat "$_TMP/out")
  ERR=$(cat "$_TMP/err")
}

_record_last() {  # _record_last USER CMD...
  local user=$1
  shift
  _rec "${user:+($user) }\$ $(_cmdline "$@")${_SORTED:+   (stdout and stderr sorted)}"
  sed 's/^/| /' "$_TMP/out" >>"$T"
  sed 's/^/! /' "$_TMP/err" >>"$T"
  _rec "[exit $RC]"
}

_pick_job_id() {  # after an sbatch: J = the id it printed, if any
  J=""
  local l
  while IFS= read -r l; do
    if [[ $l =~ ^Submitted\ batch\ job\ ([0-9]+) ]]; then J=${BASH_REMATCH[1]}; fi
    if [[ $l =~ ^([0-9]+)(\;.*)?$ ]]; then J=${BASH_REMATCH[1]}; fi
  done <<<"$OUT"
}

_pick_alloc_id() {  # after a salloc: J = the id of "salloc: Granted/Pending job allocation N"
  J=""
  local l
  while IFS= read -r l; do
    if [[ $l =~ ^salloc:\ (Granted|Pending)\ job\ allocation\ ([0-9]+) ]]; then J=${BASH_REMATCH[2]}; fi
  done <<<"$ERR"
}

_run() {
  local user=$1
  shift
  local a
  if [[ $_LITERAL != 1 ]]; then
    for a in "$@"; do
      if [[ -z $a ]]; then
        # almost always a job id that an earlier, failed step did not produce
        _rec "# skipped (an argument is empty): ${user:+($user) }\$ $(_cmdline "$@")"
        J=""
        return 0
      fi
    done
  fi
  _exec "$user" "$@"
  if [[ $_SORTED == 1 ]]; then
    LC_ALL=C sort -o "$_TMP/out" "$_TMP/out"
    LC_ALL=C sort -o "$_TMP/err" "$_TMP/err"
    OUT=$(cat "$_TMP/out")
    ERR=$(cat "$_TMP/err")
  fi
  _record_last "$user" "$@"
  local a
  for a in "$@"; do
    if [[ ${a##*/} == sbatch ]]; then _pick_job_id; break; fi
    if [[ ${a##*/} == salloc ]]; then _pick_alloc_id; break; fi
  done
  return 0
}
_LITERAL=0
_SORTED=""
run() { _run "" "$@"; }
run_sorted() { _SORTED=1; _run "" "$@"; _SORTED=""; }
run_literal() { _LITERAL=1; _run "" "$@"; _LITERAL=0; }
run_as() { local u=$1; shift; _run "$u" "$@"; }
submit() { _run "" sbatch "$@"; }
submit_as() { local u=$1; shift; _run "$u" sbatch "$@"; }
quiet() { _exec "" "$@"; }

script() {
  cat >"$1"
  chmod 0755 "$1"
  printf '%s\n' "$1" >>"$_INPUTS"
}
file() {
  cat >"$1"
  chmod 0644 "$1"
  printf '%s\n' "$1" >>"$_INPUTS"
}

pause() { sleep "$1"; }

# --- job queries ---------------------------------------------------------------------

_now() { date +%s.%N; }
_before() { awk -v d="$1" -v n="$(_now)" 'BEGIN { exit !(n < d) }'; }
_deadline() { awk -v t="$1" -v n="$(_now)" 'BEGIN { printf "%.3f", n + t }'; }

# JobState of every record of `scontrol -o show job ID`, one per line ("GONE" if unknown).
_states() {
  local out
  out=$(scontrol -o show job "$1" 2>/dev/null) || { echo GONE; return; }
  [[ -n $out ]] || { echo GONE; return; }
  grep -o 'JobState=[A-Z_]*' <<<"$out" | cut -d= -f2
}

_finished_state() {
  case $1 in
    COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY | BOOT_FAIL | DEADLINE | PREEMPTED | GONE) return 0 ;;
    *) return 1 ;;
  esac
}

wait_done() {
  local id=${1:-} timeout=${2:-30} dl s all
  if [[ -z $id || $id == _* ]]; then note "wait_done: no job id"; return 0; fi
  dl=$(_deadline "$timeout")
  while :; do
    all=1
    for s in $(_states "$id"); do _finished_state "$s" || all=0; done
    if [[ $all -eq 1 ]]; then
      # squeue -j lists an array job while any of its tasks is still queued or completing
      [[ -z $(squeue -h -j "$id" 2>/dev/null) ]] && return 0
    fi
    if ! _before "$dl"; then
      note "TIMEOUT after ${timeout}s waiting for job $id to finish (states: $(_states "$id" | sort | uniq -c | tr -s ' \n' ' '))"
      return 1
    fi
    sleep 0.1
  done
}

wait_field() {
  local id=${1:-} key=$2 want=$3 timeout=${4:-30} dl got
  if [[ -z $id || $id == _* ]]; then note "wait_field: no job id"; return 0; fi
  dl=$(_deadline "$timeout")
  while :; do
    got=$(field "$id" "$key")
    if [[ "|$want|" == *"|$got|"* ]]; then return 0; fi
    if ! _before "$dl"; then
      note "TIMEOUT after ${timeout}s waiting for job $id $key=$want (last: $key=$got)"
      return 1
    fi
    sleep 0.1
  done
}
wait_state() { wait_field "${1:-}" JobState "$2" "${3:-30}"; }

wait_queue_empty() {
  local timeout=${1:-30} dl
  dl=$(_deadline "$timeout")
  while [[ -n $(squeue -h -o %i 2>/dev/null) ]]; do
    if ! _before "$dl"; then note "TIMEOUT after ${timeout}s waiting for an empty queue"; return 1; fi
    sleep 0.1
  done
}

# Slurm marks a node that has not answered since it was resumed or missed a ping with '*'
# until its next ping (resuming one pings at once): scenarios that show node states start with
# every node answering, whatever the scenario before them did.
wait_nodes_responding() {
  local timeout=${1:-30} dl
  dl=$(_deadline "$timeout")
  while [[ $(sinfo -h -N -o %t 2>/dev/null) == *'*'* ]]; do
    if ! _before "$dl"; then note "TIMEOUT after ${timeout}s waiting for every node to respond"; return 1; fi
    sleep 0.2
  done
}

# A file a job writes once its script runs: a job is RUNNING in the controller before its
# script starts, and a signal sent in between reaches a different process.
wait_file() {
  local f=$1 timeout=${2:-30} dl
  dl=$(_deadline "$timeout")
  until [[ -e $f ]]; do
    if ! _before "$dl"; then note "TIMEOUT after ${timeout}s waiting for file $f"; return 1; fi
    sleep 0.1
  done
}

wait_step() {
  local id=${1:-} timeout=${2:-30} dl
  if [[ -z $id || $id == _* || $id == .* ]]; then note "wait_step: no step id"; return 0; fi
  dl=$(_deadline "$timeout")
  until squeue -h -s -o %i 2>/dev/null | grep -qxF -- "$id"; do
    if ! _before "$dl"; then note "TIMEOUT after ${timeout}s waiting for step $id"; return 1; fi
    sleep 0.1
  done
}

# The value of KEY in the first record of `scontrol -o show job ID`, up to the next blank
# (fine for states, reasons, times, dependencies; `fields` records values with blanks).
# Pure shell: it runs in every poll of the wait_* helpers.
field() {
  local line
  line=" $(scontrol -o show job "$1" 2>/dev/null | head -n 1)"
  line=${line#* "$2"=}
  [[ $line == " "* ]] && line=""   # KEY absent: nothing was cut
  printf '%s\n' "${line%% *}"
}

fields() {
  local id=${1:-}
  shift
  if [[ -z $id || $id == _* ]]; then note "fields: no job id"; return 0; fi
  _exec "" scontrol -o show job "$id"
  _rec "\$ scontrol -o show job $(_q "$id") | fields $*"
  if [[ $RC -eq 0 ]]; then
    python3 "$_HARNESS/jobinfo.py" fields "$@" <"$_TMP/out" | sed 's/^/| /' >>"$T"
  else
    sed 's/^/| /' "$_TMP/out" >>"$T"
  fi
  sed 's/^/! /' "$_TMP/err" >>"$T"
  _rec "[exit $RC]"
}

# --- files ------------------------------------------------------------------------------

_show_one() {
  local f=$1
  if [[ -f $f ]]; then
    _rec "--- file $f ($(wc -l <"$f") lines)"
    sed 's/^/  /' "$f" >>"$T"
    [[ -z $(tail -c 1 "$f") ]] || _rec "  (no newline at end of file)"
  elif [[ -e $f ]]; then
    _rec "--- $f exists but is not a regular file"
  else
    _rec "--- file $f does not exist"
  fi
}

show_file() {
  local f
  for f in "$@"; do _show_one "$f"; done
}

show_outputs() {
  local f n=0
  while IFS= read -r f; do
    f=${f#./}
    grep -qxF -- "$f" "$_INPUTS" && continue
    _show_one "$f"
    n=$((n + 1))
  done < <(find . -type f | LC_ALL=C sort)
  [[ $n -gt 0 ]] || _rec "--- no output files"
}

show_env() {
  local f=$1
  shift
  local pat='^(SLURM|SBATCH_|ENVIRONMENT=)' n
  for n in "$@"; do pat+="|^$n="; done
  if [[ ! -f $f ]]; then
    _rec "--- env dump $f does not exist"
    return 0
  fi
  _rec "--- environment from $f"
  grep -E "$pat" "$f" | LC_ALL=C sort | sed 's/^/  /' >>"$T"
}

# --- times ---------------------------------------------------------------------------------

# time_gap ID KEY REF GRAIN: record KEY's time minus REF's ("now" or another key of the same
# job) in seconds, rounded to GRAIN seconds (absolute times are masked; their distance is
# what a scenario can compare).
time_gap() {
  local id=${1:-} key=$2 ref=$3 grain=${4:-10} a b
  if [[ -z $id || $id == _* ]]; then note "time_gap: no job id"; return 0; fi
  a=$(field "$id" "$key")
  if [[ $ref == now ]]; then b=$(date +%s); else b=$(field "$id" "$ref"); fi
  python3 - "$key" "$a" "$ref" "$b" "$grain" >>"$T" <<'PY'
import sys, datetime
key, a, ref, b, grain = sys.argv[1:6]
def secs(v):
    if v.isdigit():
        return int(v)
    try:
        return int(datetime.datetime.strptime(v, "%Y-%m-%dT%H:%M:%S").timestamp())
    except ValueError:
        return None
sa, sb = secs(a), secs(b)
if sa is None or sb is None:
    print(f"= {key} - {ref}: not both times ({key}={a}, {ref}={b})")
else:
    g = int(grain)
    print(f"= {key} - {ref} = {round((sa - sb) / g) * g}s (to {g}s)")
PY
}
