# squeue views of pending jobs with reasons: default format, -o fields, -t, --name, -u; the
# default sort order.
run sbatch -p parked -J parked --wrap true
A=$J
run sbatch -p short -t 20 -J toolong --wrap true
B=$J
run sbatch -d afterok:"$A" -J waiting --wrap true
C=$J
wait_field "$A" Reason PartitionDown
wait_field "$B" Reason PartitionTimeLimit
wait_field "$C" Reason Dependency
run squeue -j "$A,$B,$C"
run squeue -h -o '%i|%j|%P|%T|%r|%E' -j "$A,$B,$C" --sort=i
run squeue -h -t PD -n waiting -o '%i %j'
run squeue -h -u root -o '%i %u' -j "$A"
run squeue -h -t R -j "$A"
