# --nice: Nice= in scontrol (bare --nice means 100); a negative nice from an ordinary user is
# refused, a positive one accepted.
run sbatch -p parked -J plain --wrap true
A=$J
run sbatch -p parked -J nice100 --nice=100 --wrap true
B=$J
run sbatch -p parked -J nicedefault --nice --wrap true
C=$J
fields "$A" Nice
fields "$B" Nice
fields "$C" Nice
run_as "$OTHER_USER" sbatch -p parked --nice=-10 --wrap true
run_as "$OTHER_USER" sbatch -p parked --nice=10 --wrap true
fields "$J" Nice
run sbatch -p parked --nice=-10 --wrap true
fields "$J" Nice
