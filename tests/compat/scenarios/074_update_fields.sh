# scontrol update of a pending job: Partition, JobName, Nice, NumNodes, Comment; several
# keys at once; unknown partitions, keys and job ids.
run sbatch -p parked -J before --wrap true
A=$J
run scontrol update JobId="$A" JobName=after
run scontrol update JobId="$A" Nice=50
run scontrol update JobId="$A" NumNodes=2
run scontrol update JobId="$A" Comment=first
fields "$A" Partition JobName Nice NumNodes Comment
run scontrol update JobId="$A" NumNodes=1 Comment=both Nice=0
fields "$A" Partition JobName Nice NumNodes Comment
run scontrol update JobId="$A" Partition=nosuch
run scontrol update JobId="$A" NumNodes=9
fields "$A" NumNodes
run scontrol update JobId="$A" Bogus=1
run scontrol update JobId=99999999 JobName=x
run scontrol update jobid="$A" jobname=lowercase
fields "$A" JobName
run scontrol update JobId="$A" NumNodes=1
run scontrol update JobId="$A" Partition=short
fields "$A" Partition NumNodes JobState
