# Malformed values: --time, -N, -n, -c, --mem, --nice, --begin; errors and exit codes.
run sbatch -t bogus --wrap true
run sbatch -t 1:2:3:4 --wrap true
run sbatch -N 0 --wrap true
run sbatch -N abc --wrap true
run sbatch -N 2-1 --wrap true
run sbatch -n 0 --wrap true
run sbatch -n -3 --wrap true
run sbatch -c 0 --wrap true
run sbatch --mem=abc --wrap true
run sbatch --mem=-5 --wrap true
run sbatch --nice=abc --wrap true
run sbatch --begin=32:00 --wrap true
