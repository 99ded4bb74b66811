# --requeue / --no-requeue: scontrol's Requeue= (the default follows JobRequeue=1).
run sbatch -p parked --wrap true
fields "$J" Requeue
run sbatch -p parked --requeue --wrap true
fields "$J" Requeue
run sbatch -p parked --no-requeue --wrap true
fields "$J" Requeue
