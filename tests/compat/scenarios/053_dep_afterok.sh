# afterok: pending with Reason=Dependency and Dependency=afterok:J(unfulfilled) while the
# first job runs; runs after it succeeds; Dependency=(null) afterwards.
run sbatch -o first.out --wrap 'sleep 2; echo first'
A=$J
run sbatch -d afterok:"$A" -o second.out --wrap 'echo second'
B=$J
wait_state "$A" RUNNING
fields "$B" JobState Reason Dependency
run squeue -h -o '%i %T %r %E' -j "$B"
wait_done "$B"
fields "$B" JobState Reason Dependency ExitCode
show_outputs
