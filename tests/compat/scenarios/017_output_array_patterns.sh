# Array output patterns: %A (array job id), %a (task index), %j (each task's own job id),
# %3a (zero-padded index).
script job.sh <<'S'
#!/bin/bash
echo "task $SLURM_ARRAY_TASK_ID job $SLURM_JOB_ID"
S
submit -a 2,4 -o 'A%A-a%a-j%j.txt' -e 'pad-%3a.err' job.sh
wait_done "$J"
fields "$J" ArrayJobId ArrayTaskId StdOut StdErr
show_outputs
