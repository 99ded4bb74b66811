# --begin=now+N: pending with Reason=BeginTime; StartTime/EligibleTime are N seconds after
# submission; squeue shows (BeginTime). Units: seconds (default), minutes, hours.
run sbatch --begin=now+120 --wrap true
A=$J
wait_field "$A" Reason BeginTime 10
fields "$A" JobState Reason
time_gap "$A" EligibleTime SubmitTime 10
run squeue -h -o '%i %T %r' -j "$A"
run sbatch -b now+2minutes --wrap true
time_gap "$J" EligibleTime SubmitTime 10
run sbatch --begin now+1hour --wrap true
time_gap "$J" EligibleTime SubmitTime 10
