# afterok on a job that fails: DependencyNeverSatisfied, Dependency=afterok:J(failed); the
# job stays pending (no --kill-on-invalid-dep).
run sbatch --wrap 'exit 2'
A=$J
run sbatch -d afterok:"$A" --wrap true
B=$J
wait_field "$B" Reason DependencyNeverSatisfied
fields "$B" JobState Reason Dependency
run squeue -h -o '%i %T %r %E' -j "$B"
fields "$A" JobState ExitCode
