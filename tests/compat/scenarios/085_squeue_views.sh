# squeue views of pending jobs with reasons: default format, -l header, -o fields, -t,
# --name, -u; sort order.
run sbatch -H -J held --wrap true
A=$J
run sbatch --begin=now+300 -J later --wrap true
B=$J
run sbatch -d afterok:"$A" -J waiting --wrap true
C=$J
wait_field "$C" Reason Dependency 10
wait_field "$B" Reason BeginTime 10
run squeue -j "$A,$B,$C"
run squeue -h -o '%i|%j|%T|%r' -j "$A,$B,$C" --sort=i
run squeue -h -t PD -n waiting -o '%i %j'
run squeue -h -u root -o '%i %u' -j "$A"
