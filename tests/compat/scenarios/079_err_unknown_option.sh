# Unknown options (long, short), a missing argument, an argument to a flag.
run sbatch --bogus-option --wrap true
run sbatch -q --wrap true
run sbatch -Z --wrap true
run sbatch --wrap
run sbatch -J
run sbatch --parsable=yes --wrap true
