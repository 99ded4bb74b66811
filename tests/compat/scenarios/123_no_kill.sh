# -k/--no-kill: a job whose node fails goes on with the nodes it has left (the failed node
# leaves its allocation), where without it the job is requeued or ends NODE_FAIL. The batch
# host failing ends it either way.
run sbatch -N2 -w node[1-2] --no-kill -J nokill --wrap 'sleep 60'
K=$J
wait_state "$K" RUNNING
fields "$K" JobState NumNodes NodeList
run scontrol update NodeName=node2 State=DOWN Reason=broken
sleep 2
fields "$K" JobState NumNodes NodeList BatchHost
run squeue -j "$K" -h -o '%T %D %N'
# The job's processes on node1 still run: a new step uses the node it has left.
run srun --jobid="$K" -N1 hostname
run scancel "$K"
wait_done "$K"
quiet scontrol update NodeName=node2 State=RESUME
# Without -k: the same failure ends or requeues the job.
run sbatch -N2 -w node[1-2] --no-requeue -J kill --wrap 'sleep 60'
N=$J
wait_state "$N" RUNNING
run scontrol update NodeName=node2 State=DOWN Reason=broken
wait_state "$N" "NODE_FAIL"
fields "$N" JobState
quiet scontrol update NodeName=node2 State=RESUME
# Bad values, as srun and salloc check them.
run srun --no-kill=bogus true
run sbatch --no-kill=bogus --wrap true
