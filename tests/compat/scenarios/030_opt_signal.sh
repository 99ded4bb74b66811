# --signal forms that are accepted, and the error for bad ones.
for s in USR1 USR1@30 B:USR2@60 R:TERM@10 10@5; do
  run sbatch -p parked --signal="$s" --wrap true
done
run sbatch -p parked --signal=BOGUS --wrap true
run sbatch -p parked --signal=USR1@-5 --wrap true
