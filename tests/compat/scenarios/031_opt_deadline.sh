# --deadline: accepted in the future (Deadline= set), refused in the past or malformed.
run sbatch -p parked --deadline=now+1hour --wrap true
fields "$J" JobState
time_gap "$J" Deadline SubmitTime 60
run sbatch -p parked --deadline=2001-01-01 --wrap true
run sbatch -p parked --deadline=now+1hour -t 120 --wrap true
fields "$J" JobState TimeLimit
run sbatch -p parked --deadline=garbage --wrap true
