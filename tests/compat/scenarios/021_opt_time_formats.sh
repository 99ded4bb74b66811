# --time formats: minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS, UNLIMITED, infinite;
# what scontrol shows (seconds round up to a whole minute).
ids=()
for t in 1 90 1:30 2:00:00 1-0 1-2:30 2-03:04:05 UNLIMITED infinite; do
  run sbatch -p parked -t "$t" --wrap true
  ids+=("$J")
done
for j in "${ids[@]}"; do fields "$j" TimeLimit; done
