# Input Slurm refuses or bounds: a script with a NUL byte, one over max_script_size (4 MB),
# numbers scontrol refuses (Priority, Nice, node and task counts), partition updates with bad
# values or keys, a dependency on a job id too large for 32 bits (read as 4294967295).
printf '#!/bin/sh\necho a\0b\n' > nul.sh
run sbatch -p parked nul.sh
{ printf '#!/bin/sh\n'; head -c 4194295 /dev/zero | tr '\0' '#'; printf '\n'; } > big.sh
run sbatch -p parked big.sh
run sbatch -p parked -H --dependency=afterok:999999999999999999999 --wrap true
run squeue -h -j "$J" -o '%E %r'
run sbatch -p parked --dependency=afterok:abc --wrap true
run sbatch -p parked -J bounds --wrap true
A=$J
run scontrol update JobId="$A" Priority=99999999999999
run scontrol update JobId="$A" Priority=4294967294
run scontrol update JobId="$A" Nice=99999999999
run scontrol update JobId="$A" NumNodes=99999999999
run scontrol update JobId="$A" NumNodes=5x
run scontrol update JobId="$A" NumTasks=99999999999
fields "$A" Nice NumNodes NumTasks
run scontrol update PartitionName=parked State=BOGUS
run scontrol update PartitionName=parked Foo=bar
run scontrol update PartitionName=parked MaxTime=abc
run scontrol update PartitionName=parked MaxNodes=abc
run scontrol update PartitionName=parked MaxNodes=99999999999
run scontrol update PartitionName=parked PriorityTier=99999999
run scontrol update PartitionName=parked Hidden=maybe
run scontrol update PartitionName=parked
run scontrol update PartitionName=nosuch State=UP
run_as "$OTHER_USER" scontrol update PartitionName=parked State=UP
