# MaxArraySize=100: indices must be below it.
run sbatch -p parked --array=0-99 --wrap true
run scancel "$J"
run sbatch -p parked --array=0-100 --wrap true
run sbatch -p parked --array=100 --wrap true
run sbatch -p parked --array=1-5000%2 --wrap true
