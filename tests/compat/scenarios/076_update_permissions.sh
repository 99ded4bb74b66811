# An ordinary user updating its own pending job (name, nice up, nice down), and another
# user's job; updating a finished job.
run_as "$OTHER_USER" sbatch -p parked --wrap true
A=$J
run_as "$OTHER_USER" scontrol update JobId="$A" JobName=mine Nice=10
fields "$A" JobName Nice
run_as "$OTHER_USER" scontrol update JobId="$A" Nice=-5
fields "$A" Nice
run_as "$OTHER_USER" scontrol update JobId="$A" Partition=debug
fields "$A" Partition
run sbatch -p parked --wrap true
B=$J
run_as "$OTHER_USER" scontrol update JobId="$B" JobName=theirs
run_as "$OTHER_USER" scontrol update JobId="$B" TimeLimit=5
fields "$B" JobName TimeLimit
run sbatch --wrap true
C=$J
wait_done "$C"
run scontrol update JobId="$C" JobName=late
run scontrol update JobId="$C" TimeLimit=5
