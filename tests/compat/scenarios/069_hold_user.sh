# An ordinary user: hold/uhold/release of its own job (JobHeldUser), and of a job held by
# root (JobHeldAdmin: release refused); another user's job.
run_as "$OTHER_USER" sbatch -p parked --wrap true
A=$J
run_as "$OTHER_USER" scontrol hold "$A"
fields "$A" Reason
run_as "$OTHER_USER" scontrol release "$A"
fields "$A" JobState
run_as "$OTHER_USER" scontrol uhold "$A"
fields "$A" Reason
run_as "$OTHER_USER" scontrol release "$A"
run scontrol hold "$A"
fields "$A" Reason
run_as "$OTHER_USER" scontrol release "$A"
fields "$A" Reason
run scontrol release "$A"
fields "$A" JobState
run sbatch -H -p parked --wrap true
B=$J
run_as "$OTHER_USER" scontrol release "$B"
run_as "$OTHER_USER" scontrol hold "$B"
run_as "$OTHER_USER" scancel "$B"
