# Signals sent to a running srun (standalone, step running on 2 nodes): one SIGINT (a status
# line, the tasks get nothing), SIGTERM (the step is cancelled), SIGUSR1 (passed on to the
# tasks). Two SIGINTs within a second are left out: whether srun prints the tasks' "Interrupt"
# lines and "Job step aborted" races with its forced termination (docs/srun-reference.md).
script sig.sh <<'S'
#!/bin/bash
# sig.sh SIGNAL|SECONDS... -- SRUN-ARGS: run srun in the background, wait until its step runs,
# send the signals in order (a number: sleep that long first), and exit with srun's status
set -m
sigs=()
while [[ $1 != -- ]]; do sigs+=("$1"); shift; done
shift
srun "$@" &
pid=$!
for _ in $(seq 300); do
  kill -0 "$pid" 2>/dev/null || break
  squeue -h -s -o %i 2>/dev/null | grep -q '\.0$' && break
  sleep 0.1
done
sleep 1
for s in "${sigs[@]}"; do
  case $s in
    [0-9]*) sleep "$s" ;;
    *) kill -"$s" "$pid" 2>/dev/null ;;
  esac
done
wait "$pid"
S
run_sorted ./sig.sh INT -- -N2 -n2 bash -c 'trap "echo got INT $SLURM_PROCID" INT; sleep 3 & wait; echo done $SLURM_PROCID'
wait_queue_empty
run_sorted ./sig.sh TERM -- -N2 -n2 sleep 60
wait_queue_empty
run_sorted ./sig.sh USR1 -- -N2 -n2 bash -c 'trap "echo got USR1 $SLURM_PROCID" USR1; sleep 3 & wait; echo done $SLURM_PROCID'
wait_queue_empty
