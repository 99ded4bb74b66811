# Which lines count as directives: comments and blank lines before are fine; an indented
# "#SBATCH", "# SBATCH" and "#SBATCH" after the first command are ignored.
script job.sh <<'S'
#!/bin/bash
# an ordinary comment

#SBATCH -J scanned
  #SBATCH --comment=indented
# SBATCH -t 7
#SBATCH -o scan-%j.out
echo first command
#SBATCH -p short
#SBATCH --nice=9
S
submit job.sh
wait_done "$J"
fields "$J" JobName Comment TimeLimit Partition Nice StdOut
show_outputs
