# scancel forms: several ids, a bad id, an unknown id (silent; -v says why), a finished job,
# another user's job (exit 210), -u, -n (name), -t PENDING.
run sbatch -p parked -J keep --wrap true
A=$J
run sbatch -p parked -J byname --wrap true
B=$J
run sbatch -p parked -J bystate --wrap true
C=$J
run scancel abc
run scancel 99999999
run scancel -v 99999999
run_as "$OTHER_USER" scancel "$A"
run scancel -n byname
fields "$B" JobState
run scancel -t PENDING -n bystate
fields "$C" JobState
fields "$A" JobState
run scancel "$A" "$A"
run scancel -v "$A"
