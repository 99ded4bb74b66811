# squeue's display of a pending array (J_[1-9]), with -r (one line per task) and %F/%K.
run sbatch -p parked --array=1-9 -J arr --wrap true
wait_field "$J" Reason PartitionDown
run squeue -h -j "$J"
run squeue -h -r -o '%i %F %K %T' -j "$J"
run squeue -h -o '%i %A %F %K' -j "$J"
