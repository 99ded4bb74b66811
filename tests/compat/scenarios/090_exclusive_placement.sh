# --exclusive keeps other jobs off the node; a small job next to it goes to another node.
run sbatch --exclusive -n1 -o /dev/null --wrap 'sleep 5'
A=$J
wait_state "$A" RUNNING
run sbatch --mem=100 -o /dev/null --wrap 'sleep 2'
B=$J
wait_state "$B" "RUNNING|COMPLETING|COMPLETED"
fields "$A" NodeList NumCPUs
fields "$B" NodeList NumCPUs
wait_done "$A"
wait_done "$B"
