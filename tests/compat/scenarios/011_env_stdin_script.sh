# A script on standard input: job name "sbatch", #SBATCH lines still read. Slurm does not
# set SLURM_JOB_NAME in the environment of such a job.
run sbatch <<'S'
#!/bin/bash
#SBATCH -o stdin-%j.out
echo "from stdin script: name '$SLURM_JOB_NAME'"
env > env.txt
S
wait_done "$J"
fields "$J" JobName Command StdOut
show_file "stdin-$J.out"
show_env env.txt
