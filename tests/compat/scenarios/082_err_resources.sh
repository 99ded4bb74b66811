# Requests no node can satisfy: more memory or CPUs per node than a node has (refused at
# submission), more nodes or tasks than the cluster has (accepted, pending for ever).
run sbatch --mem=5000 --wrap true
run sbatch --mem-per-cpu=600 -c 2 --wrap true
run sbatch -c 3 --wrap true
run sbatch -N 4 --wrap true
A=$J
run sbatch -n 7 --wrap true
B=$J
wait_field "$A" Reason PartitionNodeLimit 10
wait_field "$B" Reason PartitionConfig 10
fields "$A" JobState Reason NumNodes NumCPUs
fields "$B" JobState Reason NumNodes NumCPUs
