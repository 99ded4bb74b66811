# Index lists and steps: 1,3,5-9:2 and 0-10:5; squeue shows the pending tasks compressed;
# the step's environment.
run sbatch -p parked --array=1,3,5-9:2 --wrap true
A=$J
run sbatch -p parked --array=0-10:5 --wrap true
B=$J
wait_field "$A" Reason PartitionDown
wait_field "$B" Reason PartitionDown
run squeue -h -o '%i %T %r' -j "$A,$B"
fields "$A" ArrayTaskId
fields "$B" ArrayTaskId
run scancel "$A" "$B"
script job.sh <<'S'
#!/bin/bash
env > "env-$SLURM_ARRAY_TASK_ID.txt"
S
submit --array=4-8:4 -o /dev/null job.sh
wait_done "$J"
show_env env-4.txt
show_env env-8.txt
