# scontrol hold by root: JobHeldAdmin, Priority=0; release; hold/release of a finished job,
# of an unknown job, without a job.
run sbatch -p parked --wrap true
A=$J
run scontrol hold "$A"
fields "$A" JobState Reason Priority
run squeue -h -o '%i %T %r' -j "$A"
run scontrol release "$A"
fields "$A" JobState
run sbatch --wrap true
B=$J
wait_done "$B"
run scontrol hold "$B"
run scontrol release "$B"
run scontrol hold 99999999
run scontrol hold
