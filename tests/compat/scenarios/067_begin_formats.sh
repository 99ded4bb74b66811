# --begin forms: a date (YYYY-MM-DD) in the future, YYYY-MM-DDTHH:MM, midnight/noon/teatime,
# tomorrow; a time in the past runs at once; a bad one is refused.
for b in 2099-01-01 2099-01-01T10:30 2099-01-01T10:30:15 tomorrow; do
  run sbatch --begin="$b" --wrap true
  fields "$J" JobState Reason
done
run sbatch --begin=2001-01-01 -o past.out --wrap 'echo past'
wait_done "$J"
fields "$J" JobState Reason
run sbatch --begin=soon --wrap true
run sbatch --begin=now+ --wrap true
