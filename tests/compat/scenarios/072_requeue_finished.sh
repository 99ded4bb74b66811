# scontrol requeue of finished jobs (completed, failed): they go back to PENDING, keep their
# ExitCode, Restarts=1, and are held back two minutes (Reason=BeginTime once the scheduler has
# looked at them); requeue of a pending job is refused.
run sbatch --wrap true
A=$J
run sbatch --wrap 'exit 4'
B=$J
wait_done "$A"
wait_done "$B"
run scontrol requeue "$A"
run scontrol requeue "$B"
wait_field "$A" Reason BeginTime
wait_field "$B" Reason BeginTime
fields "$A" JobState Reason Restarts ExitCode
fields "$B" JobState Reason Restarts ExitCode
time_gap "$A" EligibleTime now 30
run sbatch -p parked --wrap true
run scontrol requeue "$J"
run scontrol requeuehold "$J"
