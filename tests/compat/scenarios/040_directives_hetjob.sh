# "#SBATCH hetjob" separates the components of a heterogeneous job: one id, components
# shown as J+0 and J+1 by squeue, HetJobId/HetJobOffset by scontrol. (Slurm starts het jobs
# only from the backfill scheduler, so this scenario looks at the queued job only.)
script job.sh <<'S'
#!/bin/bash
#SBATCH -J het -H
#SBATCH -n1
#SBATCH hetjob
#SBATCH -n2 -N1
echo het
S
submit job.sh
run squeue -h -o '%i %j %T %r %D' -j "$J"
fields "$J" JobId HetJobId HetJobOffset HetJobIdSet NumTasks JobState Reason
