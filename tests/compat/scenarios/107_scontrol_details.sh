# scontrol -d (--details) show job: DerivedExitCode (the largest exit status of the job's
# steps), JOB_GRES and a line "Nodes=... CPU_IDs=... Mem=... GRES=" for each run of nodes that
# hold alike; none for a job that never ran. scontrol -d show node adds GresDrain.
details() {
  run sh -c "scontrol -d show job $1 | grep -E 'ExitCode|JOB_GRES|  Nodes=|MinCPUsNode'"
}
# exec: the shell itself is what SIGTERM ends (else Slurm's ExitCode is 143:0 or 0:15 by a race)
run sbatch -N2 -n4 -w node[1-2] -J whole --wrap 'exec sleep 60'
A=$J
wait_state "$A" RUNNING
details "$A"
run scancel "$A"
wait_done "$A"
details "$A"
run sbatch -N2 -n3 --mem=500 -J three --wrap 'sleep 60'
B=$J
wait_state "$B" RUNNING
details "$B"
run sh -c "scontrol -d -o show job $B | grep -o 'CoreSpec=.*MinCPUsNode'"
run sh -c "scontrol show job $B -d | grep -c CPU_IDs"
run sh -c "scontrol --details show job $B | grep -c CPU_IDs"
run sbatch -w node3 -n1 --mem=100 -J first --wrap 'sleep 60'
C=$J
wait_state "$C" RUNNING
run sbatch -w node3 -n1 --mem=200 -J second --wrap 'sleep 60'
D=$J
wait_state "$D" RUNNING
details "$D"
run scancel "$B" "$C" "$D"
run sbatch -w node1 -J steps --wrap 'srun sh -c "exit 2"; true'
E=$J
wait_done "$E"
details "$E"
run sbatch -w node1 -J fails --wrap 'exit 3'
F=$J
wait_done "$F"
details "$F"
run sbatch -p parked -J parked --wrap true
G=$J
wait_field "$G" Reason PartitionDown
details "$G"
run scancel "$G"
run sh -c "scontrol -d show node node1 | grep -E '^   Gres'"
run sh -c "scontrol -d -o show node node1 | grep -o 'Gres=.*NodeAddr'"
