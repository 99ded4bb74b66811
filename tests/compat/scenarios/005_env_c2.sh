# The batch environment of -c2 (SLURM_CPUS_PER_TASK) and of -n2 -c1 via long options.
script job.sh <<'S'
#!/bin/bash
env > "env-$SLURM_JOB_NAME.txt"
S
submit -c2 -J c2 job.sh
wait_done "$J"
show_env env-c2.txt
submit --ntasks=2 --cpus-per-task=1 -J n2c1 job.sh
wait_done "$J"
show_env env-n2c1.txt
