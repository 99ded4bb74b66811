# The environment of array tasks: SLURM_ARRAY_JOB_ID, _TASK_ID, _TASK_COUNT, _TASK_MIN,
# _TASK_MAX, _TASK_STEP, and each task's own SLURM_JOB_ID.
script job.sh <<'S'
#!/bin/bash
env > "env-$SLURM_ARRAY_TASK_ID.txt"
S
submit --array=1-3 -o /dev/null job.sh
wait_done "$J"
for t in 1 2 3; do show_env "env-$t.txt"; done
