# --time formats: minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS, UNLIMITED, 0.
for t in 1 90 1:30 2:00:00 1-0 1-2:30 2-03:04:05 UNLIMITED infinite; do
  run sbatch -H -t "$t" --wrap true
  fields "$J" TimeLimit
done
