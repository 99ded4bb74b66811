# scontrol update PartitionName=short: DOWN keeps a job queued (PartitionDown), DRAIN and
# INACTIVE refuse submissions and DRAIN runs what is queued, limits and priorities show in
# scontrol show partition; restored at the end (the clusters are shared by all scenarios).
run scontrol update PartitionName=short State=DOWN
run sbatch -p short -J waits --wrap true
A=$J
wait_field "$A" Reason PartitionDown
fields "$A" JobState Reason
run sinfo -p short -h -o '%P %a %l'
run scontrol update PartitionName=short State=DRAIN
run sbatch -p short --wrap true
wait_done "$A"
fields "$A" JobState
run scontrol update PartitionName=short State=INACTIVE
run sbatch -p short --wrap true
run scontrol update PartitionName=short State=UP MaxTime=20 MaxNodes=1 PriorityTier=3 PriorityJobFactor=2
run scontrol show partition short
run scontrol update PartitionName=short MaxTime=10 MaxNodes=UNLIMITED Priority=1
run scontrol show partition short
