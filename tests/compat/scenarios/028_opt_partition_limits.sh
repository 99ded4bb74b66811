# A job longer than the partition's MaxTime, or wanting more nodes than the partition has,
# is accepted and pends (PartitionTimeLimit, PartitionNodeLimit / PartitionConfig).
run sbatch -p short -t 20 --wrap true
A=$J
run sbatch -p short -N 2 --wrap true
B=$J
run sbatch -N 4 --wrap true
C=$J
wait_field "$A" Reason PartitionTimeLimit 10
wait_field "$B" Reason PartitionNodeLimit 10
wait_field "$C" Reason PartitionNodeLimit 10
for j in "$A" "$B" "$C"; do fields "$j" JobState Reason NumNodes Partition; done
run squeue -h -o '%i %P %T %r' -j "$A,$B,$C"
