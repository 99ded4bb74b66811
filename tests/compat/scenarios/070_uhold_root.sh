# scontrol uhold by root gives JobHeldUser; sbatch -H then release; hold of an array.
run sbatch --begin=now+300 --wrap true
run scontrol uhold "$J"
fields "$J" JobState Reason Priority
run scontrol release "$J"
fields "$J" JobState Reason
run sbatch --array=1-3 --begin=now+300 --wrap true
A=$J
run scontrol hold "$A"
fields "$A" ArrayTaskId Reason
run scontrol release "${A}_2"
run squeue -h -o '%i %T %r' -j "$A"
