# #SBATCH lines set options: short and long forms, several per line, "--opt value" and
# "--opt=value", and "#SBATCH--opt" without a blank (--mem here).
script job.sh <<'S'
#!/bin/bash
#SBATCH -J directive-name
#SBATCH --output=dir-%j.out --error dir-%j.err
#SBATCH -t 5 -n 2
#SBATCH --comment "set by directive"
#SBATCH--mem=100
echo "name $SLURM_JOB_NAME ntasks $SLURM_NTASKS"
S
submit job.sh
wait_done "$J"
fields "$J" JobName StdOut StdErr TimeLimit NumTasks Comment MinMemoryNode
show_outputs
