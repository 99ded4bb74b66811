# Quoting in #SBATCH lines: double and single quotes keep blanks; text after the option
# (a "# comment") is ignored.
script job.sh <<'S'
#!/bin/bash
#SBATCH -J "name with spaces"
#SBATCH --comment='single quoted' # trailing words are ignored
#SBATCH -o "quoted out %j.txt"
echo "name: $SLURM_JOB_NAME"
S
submit job.sh
wait_done "$J"
fields "$J" JobName Comment StdOut
show_outputs
