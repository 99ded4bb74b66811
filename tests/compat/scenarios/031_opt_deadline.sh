# --deadline: accepted in the future (Deadline= set), refused in the past or malformed.
run sbatch -H --deadline=now+1hour --wrap true
fields "$J" Deadline JobState
run sbatch -H --deadline=2001-01-01 --wrap true
run sbatch -H --deadline=now+1hour -t 120 --wrap true
fields "$J" JobState TimeLimit
run sbatch -H --deadline=garbage --wrap true
