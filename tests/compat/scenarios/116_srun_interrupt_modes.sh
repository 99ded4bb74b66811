# One SIGINT to srun with --quit-on-interrupt (the step ends at once) and with -X
# (--disable-status: the SIGINT goes to the tasks, no status line), beside the plain one of
# 102_srun_signals.sh.
script sig.sh <<'S'
#!/bin/bash
# sig.sh SIGNAL|SECONDS... -- SRUN-ARGS: run srun in the background, wait until its step runs,
# send the signals in order (a number: sleep that long first), and exit with srun's status
set -m
sigs=()
while [[ $1 != -- ]]; do sigs+=("$1"); shift; done
shift
# whether srun first waits a scheduling pass ("queued and waiting for resources") after the
# jobs of the scenario before varies from run to run, on both sides
srun "$@" 2> >(grep -v -e 'queued and waiting for resources' -e 'has been allocated resources' >&2) &
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
rc=$?
wait
exit $rc
S
quiet sh -c 'for i in $(seq 100); do [ "$(sinfo -h -o %t | sort -u)" = idle ] && exit 0; sleep 0.1; done'
run_sorted ./sig.sh INT -- --quit-on-interrupt -N2 -n2 bash -c 'trap "echo got INT $SLURM_PROCID" INT; sleep 3 & wait; echo done $SLURM_PROCID'
wait_queue_empty
run_sorted ./sig.sh INT -- -X -N2 -n2 bash -c 'trap "echo got INT $SLURM_PROCID" INT; sleep 3 & wait; echo done $SLURM_PROCID'
wait_queue_empty
