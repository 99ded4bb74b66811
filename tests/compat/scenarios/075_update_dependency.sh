# scontrol update Dependency=: change it, clear it (Dependency=) and the job runs; set it to
# an unknown job id or to nonsense.
run sbatch -p parked --wrap true
A=$J
run sbatch -o dep.out -d afterok:"$A" --wrap 'echo dependency cleared'
B=$J
wait_field "$B" Reason Dependency
fields "$B" Dependency Reason
run sbatch -p parked --wrap true
C=$J
run scontrol update JobId="$B" Dependency=afterany:"$C"
wait_field "$B" Reason Dependency
fields "$B" Dependency Reason
run scontrol update JobId="$B" Dependency=
wait_done "$B"
fields "$B" JobState Dependency
show_outputs
run sbatch -p parked --wrap true
D=$J
run scontrol update JobId="$D" Dependency=afterok:"$A"
fields "$D" Dependency
run scontrol update JobId="$D" Dependency=afterok:99999999
fields "$D" Dependency
run scontrol update JobId="$D" Dependency=bogus
fields "$D" Dependency
