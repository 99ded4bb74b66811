# --signal forms that are accepted, and the error for a bad one.
for s in USR1 USR1@30 B:USR2@60 R:TERM@10 10@5; do
  run sbatch -H --signal="$s" --wrap true
done
run sbatch -H --signal=BOGUS --wrap true
run sbatch -H --signal=USR1@-5 --wrap true
