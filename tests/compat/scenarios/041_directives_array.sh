# #SBATCH --array in a script; the command line overrides it.
script job.sh <<'S'
#!/bin/bash
#SBATCH --array=1-2
#SBATCH -o arr-%A_%a.out
echo "task $SLURM_ARRAY_TASK_ID"
S
submit job.sh
wait_done "$J"
submit --array=5 job.sh
wait_done "$J"
show_outputs
