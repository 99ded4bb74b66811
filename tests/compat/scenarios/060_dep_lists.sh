# Dependency lists: "," (all must hold) and "?" (any may hold), several ids per type.
run sbatch -H --wrap true
A=$J
run sbatch -H --wrap true
B=$J
run sbatch -H -d afterok:"$A",afterany:"$B" --wrap true
fields "$J" Dependency Reason
run sbatch -H -d afterok:"$A"?afternotok:"$B" --wrap true
fields "$J" Dependency Reason
run sbatch -H -d afterok:"$A":"$B" --wrap true
fields "$J" Dependency Reason
run sbatch -H --dependency=afterany:"$A",singleton --wrap true
fields "$J" Dependency Reason
