# srun -W/--wait: once the first task has ended, the others get SEC seconds; then srun says
# where the tasks stand (running, exited abnormally, exited) and the step ends as a cancelled
# one. Lines sorted: tasks on several nodes report in no fixed order.
quiet sh -c 'for i in $(seq 100); do [ "$(sinfo -h -o %t | sort -u)" = idle ] && exit 0; sleep 0.1; done'
run_sorted srun -W 2 -N2 -n4 bash -c '[ $SLURM_PROCID = 1 ] && exit 0; sleep 30'
wait_queue_empty
run_sorted srun -W 2 -N2 -n4 bash -c '[ $SLURM_PROCID = 1 ] && exit 0; [ $SLURM_PROCID = 2 ] && exit 3; sleep 30'
wait_queue_empty
# every task ends within the time: nothing is said
run_sorted srun -W 3 -N2 -n2 bash -c '[ $SLURM_PROCID = 1 ] && exit 0; sleep 1; exit 4'
wait_queue_empty
