# Steps of a batch job while srun runs one: squeue -s (without its TIME column), scontrol
# show step[s] (N.0, N, unknown ones), then inside the job: a second step while the first
# holds every CPU ("step creation temporarily disabled"), --overlap, steps asking for more
# than the allocation, and scancel of a running step (what srun prints, its exit code).
# Each srun's stderr is sorted (its lines from several nodes come in no fixed order) and
# printed after its exit status.
script job.sh <<'S'
#!/bin/bash
# a step's CPUs are free again only once squeue -s no longer lists it; a step started before
# that prints "step creation temporarily disabled" first
settle() {
  local i
  for i in $(seq 100); do
    squeue -h -s -j "$SLURM_JOB_ID" -o %i | grep -qv batch || return 0
    sleep 0.1
  done
}
report() { echo "--- $1: exit $2"; LC_ALL=C sort "$1.err"; rm -f "$1.err"; }
srun -N2 -n4 sleep 300 2>step0.err; report step0 $?
settle
srun -n2 sleep 3 &
sleep 1
srun -n1 echo second 2>second.err; report second $?
wait
settle
srun -n2 sleep 3 &
sleep 1
srun -n1 --overlap echo overlapped 2>overlap.err; report overlap $?
wait
settle
srun -n5 true 2>n5.err; report n5 $?
srun -N3 true 2>N3.err; report N3 $?
srun --mem=5000 true 2>mem.err; report mem $?
srun -w node3 true 2>w.err; report w $?
S
submit -N2 -n4 -o job.out job.sh
wait_step "$J.0"
run squeue -s -o '%.15i %.8j %.9P %.8u %N'
run squeue -s -j "$J" -o '%.15i %.8j %.9P %.8u %N'
run scontrol show step "$J.0"
run scontrol -o show step "$J"
run scontrol show steps
run scontrol show step "$J.7"
run scontrol show step 99999999
run scancel "$J.0"
wait_done "$J"
fields "$J" JobState ExitCode
run scontrol show step "$J.0"
show_file job.out
