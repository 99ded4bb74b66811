# Dependencies on arrays: afterok:A (all tasks), afterok:A_2 (one task); how scontrol shows
# them while the array is held.
run sbatch -H --array=1-3 --wrap true
A=$J
run sbatch -H -d afterok:"$A" --wrap true
fields "$J" Dependency Reason
run sbatch -H -d afterok:"${A}_2" --wrap true
fields "$J" Dependency Reason
run sbatch -H -d "afterany:${A}_*" --wrap true
fields "$J" Dependency Reason
