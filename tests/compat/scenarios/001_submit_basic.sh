# sbatch FILE: "Submitted batch job N"; stdout and stderr both go to slurm-N.out in the
# submit directory; final state, reason and exit code.
script job.sh <<'S'
#!/bin/bash
echo "hello from the job"
echo "to stderr" >&2
S
submit job.sh
wait_done "$J"
fields "$J" JobState Reason ExitCode JobName Partition NumNodes NumCPUs NumTasks StdIn StdOut StdErr WorkDir Command
show_outputs
