# Bad dependencies: unknown syntax, a job id that does not exist, an array task that does
# not exist, a dependency on itself is impossible to name; errors and exit codes.
run sbatch -d foo --wrap true
run sbatch -d afterok --wrap true
run sbatch -d afterok: --wrap true
run sbatch -d afterok:abc --wrap true
run sbatch -d afterok:99999999 --wrap true
run sbatch -p parked --wrap true
A=$J
run sbatch -d afterok:"${A}_7" --wrap true
run sbatch -d after:"$A"+x --wrap true
run sbatch -d "afterok:$A;afterok:$A" --wrap true
