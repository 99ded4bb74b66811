# scontrol update of a pending job: Partition, JobName, Nice, NumNodes, Comment; several
# keys at once; unknown keys and values.
run sbatch -H -J before --wrap true
A=$J
run scontrol update JobId="$A" Partition=short
run scontrol update JobId="$A" JobName=after
run scontrol update JobId="$A" Nice=50
run scontrol update JobId="$A" NumNodes=2
fields "$A" Partition JobName Nice NumNodes
run scontrol update JobId="$A" Partition=debug NumNodes=1 Comment=both
fields "$A" Partition JobName Nice NumNodes Comment
run scontrol update JobId="$A" Partition=nosuch
run scontrol update JobId="$A" NumNodes=9
fields "$A" NumNodes Reason
run scontrol update JobId="$A" Bogus=1
run scontrol update JobId=99999999 JobName=x
