# Precedence: #SBATCH lines < SBATCH_* input environment variables < the command line.
script job.sh <<'S'
#!/bin/bash
#SBATCH -J from-script
#SBATCH -t 5
#SBATCH --comment=from-script
#SBATCH -o prec-%x.out
echo "$SLURM_JOB_NAME"
S
submit job.sh
wait_done "$J"
fields "$J" JobName TimeLimit Comment StdOut
run env SBATCH_JOB_NAME=from-env SBATCH_TIMELIMIT=6 sbatch job.sh
wait_done "$J"
fields "$J" JobName TimeLimit Comment StdOut
run env SBATCH_JOB_NAME=from-env SBATCH_TIMELIMIT=6 sbatch -J from-cmdline --comment=from-cmdline job.sh
wait_done "$J"
fields "$J" JobName TimeLimit Comment StdOut
show_outputs
