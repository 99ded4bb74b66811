# scontrol update TimeLimit: root may set anything; the owner of a pending job may change
# it; formats; a running job's limit raised by its owner is refused.
run_as "$OTHER_USER" sbatch -p parked -t 10 --wrap true
A=$J
run_as "$OTHER_USER" scontrol update JobId="$A" TimeLimit=5
fields "$A" TimeLimit
run_as "$OTHER_USER" scontrol update JobId="$A" TimeLimit=20
fields "$A" TimeLimit
run scontrol update JobId="$A" TimeLimit=1-00:00:00
fields "$A" TimeLimit
run scontrol update JobId="$A" TimeLimit=+30
fields "$A" TimeLimit
run scontrol update JobId="$A" TimeLimit=-15
fields "$A" TimeLimit
run scontrol update JobId="$A" TimeLimit=bogus
run_as "$OTHER_USER" sbatch -t 5 -o /dev/null --wrap 'exec sleep 60'
B=$J
wait_state "$B" RUNNING
run_as "$OTHER_USER" scontrol update JobId="$B" TimeLimit=10
run_as "$OTHER_USER" scontrol update JobId="$B" TimeLimit=3
fields "$B" TimeLimit
