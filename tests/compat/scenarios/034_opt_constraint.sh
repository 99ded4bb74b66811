# -C/--constraint with a feature no node has is refused.
run sbatch -C bigmem --wrap true
run sbatch --constraint='a&b' --wrap true
