# An array's default output file is slurm-%A_%a.out, one per task.
script job.sh <<'S'
#!/bin/bash
echo "task $SLURM_ARRAY_TASK_ID of $SLURM_ARRAY_JOB_ID"
S
submit --array=1-3 job.sh
wait_done "$J"
show_outputs
