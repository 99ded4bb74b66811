# aftercorr: task N of the second array waits for task N of the first.
script first.sh <<'S'
#!/bin/bash
exit $(( SLURM_ARRAY_TASK_ID == 2 ? 1 : 0 ))
S
run sbatch --array=1-3 -o /dev/null first.sh
A=$J
run sbatch --array=1-3 -d aftercorr:"$A" -o 'corr-%a.out' --wrap 'echo "task $SLURM_ARRAY_TASK_ID"'
B=$J
wait_done "$A"
wait_field "${B}_2" Reason DependencyNeverSatisfied 20
wait_state "${B}_1" COMPLETED
wait_state "${B}_3" COMPLETED
run squeue -h -o '%i %T %r' -j "$B"
# One task at a time: which record keeps the array's id (and so the order scontrol lists the
# tasks in) depends on whether first.sh's task 2 or task 3 ends first, on either system.
for t in 1 2 3; do fields "${B}_$t" ArrayTaskId JobState Reason Dependency; done
show_outputs
