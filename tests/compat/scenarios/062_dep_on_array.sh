# Dependencies on arrays: afterok:A (all tasks), afterok:A_2 (one task), afterany:A_*; how
# scontrol shows them while the array is queued.
run sbatch -p parked --array=1-3 --wrap true
A=$J
run sbatch -d afterok:"$A" --wrap true
wait_field "$J" Reason Dependency
fields "$J" Dependency Reason
run sbatch -d afterok:"${A}_2" --wrap true
wait_field "$J" Reason Dependency
fields "$J" Dependency Reason
run sbatch -d "afterany:${A}_*" --wrap true
wait_field "$J" Reason Dependency
fields "$J" Dependency Reason
