# A dependency on a job that already finished: afterok on a success runs at once, afterok
# on a failure never can.
run sbatch --wrap true
A=$J
run sbatch --wrap false
B=$J
wait_done "$A"
wait_done "$B"
run sbatch -d afterok:"$A" -o ok.out --wrap 'echo ran'
C=$J
run sbatch -d afterok:"$B" --wrap 'echo never'
D=$J
wait_done "$C"
wait_field "$D" Reason DependencyNeverSatisfied
fields "$C" JobState Dependency
fields "$D" JobState Reason Dependency
show_outputs
