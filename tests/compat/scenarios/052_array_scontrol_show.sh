# scontrol show job of a pending array: one record with ArrayTaskId=1-5, then one record per
# task once tasks have started (JobId of each task, ArrayJobId, ArrayTaskId).
run sbatch -H --array=1-5 -J arrshow --wrap true
run scontrol show job "$J"
run scontrol release "$J"
wait_done "$J"
fields "$J" JobId ArrayJobId ArrayTaskId JobName JobState
