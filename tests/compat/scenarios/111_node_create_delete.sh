# scontrol create/delete NodeName=...: what Slurm refuses and how it says so. Only refusals:
# the clusters are shared by all scenarios (and have no MaxNodeCount, so no room for a node).
run scontrol create NodeName=extra1 CPUs=2 State=IDLE
run scontrol create NodeName=extra1 CPUs=2 RealMemory=500
run scontrol create NodeName=extra1 CPUs=abc State=FUTURE
run scontrol delete NodeName=nosuchnode
run sbatch -w node1 -J holds --wrap 'sleep 60'
A=$J
wait_state "$A" RUNNING
run scontrol delete NodeName=node1
run scancel "$A"
wait_done "$A"
