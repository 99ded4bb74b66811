# --kill-on-invalid-dep=yes: a job whose dependency can never be satisfied is cancelled;
# without it the job stays pending with DependencyNeverSatisfied.
run sbatch --wrap 'exit 1'
A=$J
wait_done "$A"
run sbatch --kill-on-invalid-dep=yes -d afterok:"$A" --wrap true
B=$J
run sbatch --kill-on-invalid-dep=no -d afterok:"$A" --wrap true
C=$J
wait_done "$B" 15
wait_field "$C" Reason DependencyNeverSatisfied 15
fields "$B" JobState Reason Dependency
fields "$C" JobState Reason Dependency
