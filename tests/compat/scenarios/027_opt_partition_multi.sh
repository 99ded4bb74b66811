# -p short,debug: the job runs in one of them; a job too long for short goes to debug.
run sbatch -p short,debug -t 20 -o multi.out --wrap 'echo "$SLURM_JOB_PARTITION"'
wait_done "$J"
fields "$J" Partition JobState
show_outputs
