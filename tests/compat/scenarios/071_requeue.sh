# scontrol requeue of a running job: it goes back to PENDING, Restarts=1, and is not eligible
# again for a while (Reason=BeginTime); requeue of a job with --no-requeue is refused;
# requeuehold holds it.
run sbatch -o rq.out --wrap 'echo started; exec sleep 60'
A=$J
wait_state "$A" RUNNING
run scontrol requeue "$A"
wait_state "$A" PENDING
fields "$A" JobState Reason Restarts
time_gap "$A" EligibleTime now 30
run sbatch --no-requeue --wrap 'exec sleep 60'
B=$J
wait_state "$B" RUNNING
run scontrol requeue "$B"
run sbatch -o rqh.out --wrap 'exec sleep 60'
C=$J
wait_state "$C" RUNNING
run scontrol requeuehold "$C"
wait_state "$C" PENDING
fields "$C" JobState Reason Restarts
run scontrol requeue 99999999
