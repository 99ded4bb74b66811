# scontrol uhold by root gives JobHeldUser; release; hold of a whole array and release of
# one of its tasks.
run sbatch -p parked --wrap true
run scontrol uhold "$J"
fields "$J" JobState Reason Priority
run scontrol release "$J"
fields "$J" JobState
run sbatch -p parked --array=1-3 --wrap true
A=$J
run scontrol hold "$A"
fields "$A" ArrayTaskId Reason
run scontrol release "${A}_2"
wait_field "${A}_2" Reason PartitionDown
run squeue -h -o '%i %T %r' -j "$A"
fields "$A" ArrayTaskId Reason
