# An unknown partition, one unknown in a list, an empty -p.
run sbatch -p nosuch --wrap true
run sbatch -p debug,nosuch --wrap true
run_literal sbatch -p "" --wrap true
