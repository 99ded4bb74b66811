# srun --test-only (and sbatch's beside it): when and where a job would start, on an idle
# cluster and behind a running job; refusals; no job is made either way.
script when.sh <<'S'
#!/bin/bash
# when.sh CMD...: run a --test-only command and say how far off the start it answers is
# (start times are masked in transcripts; their distance from now is what can be compared)
err=$("$@" 2>&1 >/dev/null)
rc=$?
at=$(sed -n 's/.* to start at \([0-9T:-]*\) .*/\1/p' <<<"$err")
if [[ -z $at ]]; then echo "no start (exit $rc)"; exit $rc; fi
gap=$(( $(date -d "$at" +%s) - $(date +%s) ))
if (( gap < 30 )); then echo "starts now"
elif (( gap < 600 )); then echo "starts within 10 minutes"
else echo "starts later"; fi
S
quiet sh -c 'for i in $(seq 100); do [ "$(sinfo -h -o %t | sort -u)" = idle ] && exit 0; sleep 0.1; done'
run srun --test-only hostname
run srun --test-only -N2 -n3 hostname
run srun --test-only -q -n 6 true
run srun --test-only -N5 hostname
run srun --test-only -n 4 -c 2 true
run srun --test-only --mem=5000 true
run srun --test-only -p nosuch true
run sbatch --test-only -p nosuch --wrap true
# A partition that is down still gets an answer: the job would wait there, not be refused.
run srun --test-only -p parked true
run squeue -h
# node1 (partition short's only node) busy for 5 minutes
submit -p short -t 5 -c 2 --wrap 'sleep 300'
busy=$J
wait_state "$busy" RUNNING
run ./when.sh srun --test-only -p short true
run ./when.sh sbatch --test-only -p short -t 3 --wrap true
run ./when.sh srun --test-only -w node1 true
run ./when.sh srun --test-only -w node2 true
run ./when.sh srun --test-only -N3 true
run squeue -h -o '%i %t'
run scancel "$busy"
wait_queue_empty
