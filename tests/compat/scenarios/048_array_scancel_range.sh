# scancel J_[1-3] cancels a range of tasks; squeue -t all afterwards.
run sbatch -p parked --array=1-9 --wrap true
wait_field "$J" Reason PartitionDown
run scancel "${J}_[1-3]"
run squeue -h -o '%i %T %r' -j "$J"
run scancel "${J}_[7,9]"
run squeue -h -o '%i %T %r' -j "$J"
run scancel "$J"
run squeue -h -t all -o '%i %T %r' -j "$J"
