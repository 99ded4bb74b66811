# --test-only: nothing is queued; stderr says when and where the job would start.
run sbatch --test-only --wrap true
run sbatch --test-only -p short -n 2 --wrap true
run sbatch --test-only -N 2 --wrap true
run squeue -h
