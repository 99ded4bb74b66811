# --requeue / --no-requeue: scontrol's Requeue= (default follows JobRequeue=1).
run sbatch -H --wrap true
fields "$J" Requeue
run sbatch -H --requeue --wrap true
fields "$J" Requeue
run sbatch -H --no-requeue --wrap true
fields "$J" Requeue
