# Final states of array tasks with different exits; the array's ExitCode; each task's job
# id; scontrol show job of one task (J_2).
script job.sh <<'S'
#!/bin/bash
exit $(( SLURM_ARRAY_TASK_ID == 2 ? 3 : 0 ))
S
submit --array=1-3 -o /dev/null job.sh
wait_done "$J"
fields "$J" JobId ArrayJobId ArrayTaskId JobState Reason ExitCode
fields "${J}_2" JobId ArrayJobId ArrayTaskId JobName JobState Reason ExitCode NodeList BatchHost StdOut
run squeue -h -t all -o '%i %A %T' -j "$J"
