# With "?" one satisfied dependency is enough; with "," all must be.
run sbatch --wrap 'exit 1'
A=$J
run sbatch --wrap true
B=$J
wait_done "$A"
wait_done "$B"
run sbatch -d afterok:"$A"?afterok:"$B" -o or.out --wrap 'echo or ran'
C=$J
run sbatch -d afterok:"$A",afterok:"$B" --wrap 'echo and ran'
D=$J
wait_done "$C"
wait_field "$D" Reason DependencyNeverSatisfied
fields "$C" JobState Dependency
fields "$D" JobState Reason Dependency
show_outputs
