# scontrol show job of a pending array: one record with ArrayTaskId=1-5; once tasks have
# run, one record per task (each task's JobId, ArrayJobId, ArrayTaskId). (Not the whole
# record: Slurm fills EligibleTime/AccrueTime at a scheduling pass, so they race.)
run sbatch -p parked --array=1-5 -J arrshow --wrap true
wait_field "$J" Reason PartitionDown
fields "$J" JobId ArrayJobId ArrayTaskId JobName JobState Reason Partition AllocNode:Sid NumNodes NumCPUs NumTasks TimeLimit Command WorkDir StdOut StdErr StdIn
run scancel "$J"
run sbatch --array=1-3 -J arrdone --wrap true
wait_done "$J"
fields "$J" JobId ArrayJobId ArrayTaskId JobName JobState
