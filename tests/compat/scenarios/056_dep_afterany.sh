# afterany runs after success, failure or cancellation.
run sbatch --wrap 'exit 5'
A=$J
run sbatch -p parked --wrap true
C=$J
run sbatch -d afterany:"$A" -o any1.out --wrap 'echo after failure'
B1=$J
run sbatch -d afterany:"$C" -o any2.out --wrap 'echo after cancel'
B2=$J
run scancel "$C"
wait_done "$B1"
wait_done "$B2"
fields "$B1" JobState Dependency
fields "$B2" JobState Dependency
show_outputs
