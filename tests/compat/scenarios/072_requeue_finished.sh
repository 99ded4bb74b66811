# scontrol requeue of finished jobs (completed, failed) and of a pending job.
run sbatch --wrap true
A=$J
run sbatch --wrap 'exit 4'
B=$J
wait_done "$A"
wait_done "$B"
run scontrol requeue "$A"
fields "$A" JobState Reason Restarts ExitCode
run scontrol requeue "$B"
fields "$B" JobState Reason Restarts ExitCode
run sbatch -p parked --wrap true
run scontrol requeue "$J"
run scontrol requeuehold "$J"
