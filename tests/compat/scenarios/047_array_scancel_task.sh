# scancel J_5 cancels one pending task; the others stay in J_[1-4,6-9]; a cancelled pending
# task leaves no record of its own.
run sbatch -p parked --array=1-9 --wrap true
wait_field "$J" Reason PartitionDown
run scancel "${J}_5"
run squeue -h -o '%i %T %r' -j "$J"
fields "$J" JobId ArrayTaskId JobState Reason
run scancel "${J}_5"
run scancel -v "${J}_42"
run scancel "$J"
fields "$J" JobId ArrayTaskId JobState Reason
