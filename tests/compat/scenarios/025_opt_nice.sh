# --nice: Nice= in scontrol; a job with a higher nice value sorts after one with a lower in
# squeue's priority order; a negative nice from an ordinary user is refused.
run sbatch -H -J plain --wrap true
A=$J
run sbatch -H -J nice100 --nice=100 --wrap true
B=$J
run sbatch -H -J nicedefault --nice --wrap true
C=$J
fields "$A" Nice
fields "$B" Nice
fields "$C" Nice
run_as "$OTHER_USER" sbatch -H --nice=-10 --wrap true
run_as "$OTHER_USER" sbatch -H --nice=10 --wrap true
fields "$J" Nice
