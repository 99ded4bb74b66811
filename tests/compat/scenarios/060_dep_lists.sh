# Dependency lists: "," (all must hold) and "?" (any may hold), several ids per type.
run sbatch -p parked --wrap true
A=$J
run sbatch -p parked --wrap true
B=$J
run sbatch -p parked -d afterok:"$A",afterany:"$B" --wrap true
fields "$J" Dependency
run sbatch -p parked -d afterok:"$A"?afternotok:"$B" --wrap true
fields "$J" Dependency
run sbatch -p parked -d afterok:"$A":"$B" --wrap true
fields "$J" Dependency
run sbatch -p parked --dependency=afterany:"$A",singleton --wrap true
fields "$J" Dependency
run sbatch -d afterok:"$A" --wrap true
wait_field "$J" Reason Dependency
fields "$J" JobState Reason Dependency
