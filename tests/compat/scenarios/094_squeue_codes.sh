# squeue: every -o % code (and -O names) on a pending job with many options set and on a
# running job; the filters -A -q -w and the SQUEUE_* environment variables.
run sbatch -p parked -J many --mincpus=2 --mem=200 --nice=5 --comment=hello \
  -x node3 -t 30 -N1 -n2 -c1 --wrap true
P=$J
run sbatch -J busy -t 10 -w node2 --mem=100 --wrap 'sleep 60'
R=$J
wait_state "$R" RUNNING
wait_field "$P" Reason PartitionDown
# (%p and %Q left out: priorities depend on how many jobs the cluster has seen)
for code in a A B c C d D E f F g G h H i I j J k K l m n N o O P q r R s t T u U v w W x X y Y z Z; do
  run squeue -h -j "$P,$R" --sort=i -o "%$code|"
done
# the column titles of every code and field (no job is BOOT_FAIL: headers only)
run squeue -t BF -o '%a|%A|%B|%c|%C|%d|%D|%e|%E|%f|%F|%g|%G|%h|%H|%i|%I|%j|%J|%k|%K|%l|%L|%m|%M|%n|%N|%o|%O|%p|%P|%q|%Q|%r|%R|%s|%S|%t|%T|%u|%U|%v|%V|%w|%W|%x|%X|%y|%Y|%z|%Z'
run squeue -t BF -O 'Account,AccrueTime,AllocNodes,AllocSID,ArrayJobID,ArrayTaskID,AssocID,BatchFlag,BatchHost,BoardsPerNode,BurstBuffer,BurstBufferState'
run squeue -t BF -O 'Cluster,ClusterFeature,Command,Comment,Contiguous,Container,Cores,CoreSpec,CPUFreq,Deadline,DelayBoot,Dependency'
run squeue -t BF -O 'DerivedEC,EligibleTime,EndTime,Feature,GroupID,GroupName,HetJobID,HetJobIDSet,HetJobOffset,JobArrayID,JobID,LastSchedEval'
run squeue -t BF -O 'Licenses,MaxCPUs,MaxNodes,MCSLabel,MinCpus,MinMemory,MinTime,MinTmpDisk,Name,Network,Nice,NodeList'
run squeue -t BF -O 'Nodes,NTPerBoard,NTPerCore,NTPerNode,NTPerSocket,NumCPUs,NumNodes,NumTasks,OriginRaw,OverSubscribe,Partition,PendingTime'
run squeue -t BF -O 'PreemptTime,Priority,PriorityLong,Profile,QOS,ReasonList,ReqNodes,ReqSwitch,Requeue,Reservation,ResizeTime,RestartCnt'
run squeue -t BF -O 'ResvPort,SchedNodes,SCT,SelectJobInfo,SiblingsActive,SiblingsActiveRaw,SiblingsViable,SiblingsViableRaw,Sockets,SPerBoard,StartTime,State'
run squeue -t BF -O 'StateCompact,STDIN,StepName,StepState,SubmitTime,Threads,TimeLeft,TimeLimit,TimeUsed,UserName,WCKey,WorkDir'
run squeue -t BF -O 'Reason,ExitCode,UserID'
# values of every field for the pending and the running job
run squeue -h -j "$P,$R" --sort=i -O 'Account,AllocNodes,ArrayJobID,ArrayTaskID,AssocID,BatchFlag,BatchHost,BoardsPerNode'
run squeue -h -j "$P,$R" --sort=i -O 'BurstBuffer,BurstBufferState,Cluster,ClusterFeature,Command,Comment,Contiguous,Container'
run squeue -h -j "$P,$R" --sort=i -O 'Cores,CoreSpec,CPUFreq,DelayBoot,Dependency,DerivedEC,Feature,GroupID'
run squeue -h -j "$P,$R" --sort=i -O 'GroupName,HetJobID,HetJobIDSet,HetJobOffset,JobArrayID,JobID,Licenses,MaxCPUs'
run squeue -h -j "$P,$R" --sort=i -O 'MaxNodes,MCSLabel,MinCpus,MinMemory,MinTime,MinTmpDisk,Name,Network'
run squeue -h -j "$P,$R" --sort=i -O 'Nice,NodeList,Nodes,NTPerBoard,NTPerCore,NTPerNode,NTPerSocket,NumCPUs'
run squeue -h -j "$P,$R" --sort=i -O 'NumNodes,NumTasks,OriginRaw,OverSubscribe,Partition,Profile,QOS,ReasonList'
run squeue -h -j "$P,$R" --sort=i -O 'ReqNodes,ReqSwitch,Requeue,Reservation,RestartCnt,ResvPort,SchedNodes,SCT'
run squeue -h -j "$P,$R" --sort=i -O 'SelectJobInfo,SiblingsActive,SiblingsActiveRaw,SiblingsViable,SiblingsViableRaw,Sockets,SPerBoard,State'
run squeue -h -j "$P,$R" --sort=i -O 'StateCompact,STDIN,StepName,StepState,Threads,TimeLimit,UserName,WCKey'
run squeue -h -j "$P,$R" --sort=i -O 'WorkDir,Reason,ExitCode,UserID'
run squeue -j "$P,$R" --sort=i -o '%.3c %5D %-6P %.10r'
run squeue -h -j "$P" -o '%L' --noconvert
run squeue -h -w node2 -o '%i %N'
run squeue -h -w node1 -o '%i %N'
run squeue -h -A nobody -o '%i'
run squeue -h -q normal -o '%i'
run squeue -j "$P,$R" --sort=i -O 'JobID,Partition:12,Name:.6,UserName,StateCompact,NumNodes,ReasonList'
run squeue -h -j "$P" -O 'JobArrayID,MinCpus,MinMemory,MinTmpDisk,Nice,Comment,ExcNodes,TimeLimit,Reason'
run squeue -h -j "$P" -O 'State:10,Dependency,Features,WorkDir:5,Command'
run squeue -h -j "$P" -O 'nosuchfield'
run squeue -h -j "$P" -o '%i %!'
run env SQUEUE_FORMAT='%i:%j' squeue -h -j "$P"
run env SQUEUE_FORMAT2='jobid:8,name' squeue -h -j "$P"
run env SQUEUE_STATES=all squeue -h -j "$P,$R" --sort=i -o '%i %t'
run env SQUEUE_PARTITION=parked squeue -h -j "$P,$R" -o '%i'
run env SQUEUE_USERS=root squeue -h -j "$P" -o '%i'
run squeue -s -j "$P"
# (the step's TIME column left out: it depends on when the command runs)
run sh -c "squeue -h -s -j $R | awk '{print \$1, \$2, \$3, \$4, \$6}'"
run sbatch --tmp=100 --wrap true
run squeue -h -i 1 -j "$P" -o '%i' --iterate=0
run scancel "$P" "$R"
