# afternotok runs after a failure; after a success it can never run.
run sbatch --wrap 'exit 1'
A=$J
run sbatch -d afternotok:"$A" -o notok.out --wrap 'echo ran after failure'
B=$J
run sbatch --wrap true
C=$J
run sbatch -d afternotok:"$C" --wrap true
D=$J
wait_done "$B"
wait_field "$D" Reason DependencyNeverSatisfied
fields "$B" JobState Reason Dependency
fields "$D" JobState Reason Dependency
show_outputs
