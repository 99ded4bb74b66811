# scontrol hold (by root: JobHeldAdmin, Priority=0) and release; hold of a running or
# finished job.
run sbatch --begin=now+300 --wrap true
A=$J
run scontrol hold "$A"
fields "$A" JobState Reason Priority
run squeue -h -o '%i %T %r' -j "$A"
run scontrol release "$A"
fields "$A" JobState Reason
run sbatch --wrap true
B=$J
wait_done "$B"
run scontrol hold "$B"
run scontrol release "$B"
run scontrol hold 99999999
run scontrol hold
