# singleton: one job of a given name and user at a time; the second waits (Dependency
# singleton(unfulfilled)) until the first ends.
run sbatch -J solo -o s1.out --wrap 'sleep 2; echo one'
A=$J
run sbatch -J solo -d singleton -o s2.out --wrap 'echo two'
B=$J
run sbatch -J other -d singleton -o s3.out --wrap 'echo three'
C=$J
wait_state "$A" RUNNING
fields "$B" JobState Reason Dependency
wait_done "$B"
wait_done "$C"
fields "$B" JobState Dependency
fields "$C" JobState Dependency
show_outputs
