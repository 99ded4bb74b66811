# sinfo -O/--Format: Slurm 22.05's field names with their titles and values, sizes, suffixes
# and justification, unknown names; unknown -o letters, %all; how SINFO_FORMAT, -o, -O, -l,
# -N, -s and -R combine; partitions that no node passes the filters for.
wait_nodes_responding
run scontrol update NodeName=node3 State=DRAIN Reason=disk
run sinfo -O partition,available,time,nodes,statecompact,nodelist
run sinfo -O 'PartitionName:8,Nodes:.4|,StateLong:,NodeList:5x,CPUs:-3!,Memory:.,Weight:0'
run sinfo -O 'Partition:3,nodes:1' -p debug
run sinfo -O 'NODELIST,cpus'
# every field but the machine's CPU load, free memory and each node's port
run sinfo -h -O 'AllocMem:0|,AllocNodes:0|,Available:0|,Cluster:0|,Comment:0|,Cores:0|,CPUs:0|,CPUsState:0|,DefaultTime:0|,Disk:0|,Extra:0|,Features:0|,features_act:0|,Gres:0|,GresUsed:0|,Groups:0|,MaxCPUsPerNode:0|,Memory:0|,NodeAddr:0|,NodeAI:0|,NodeAIOT:0|,NodeHost:0|,NodeList:0|,Nodes:0|,OverSubscribe:0|,Partition:0|,PartitionName:0|,PreemptMode:0|,PriorityJobFactor:0|,PriorityTier:0|,Reason:0|,Root:0|,Size:0|,SocketCoreThread:0|,Sockets:0|,StateCompact:0|,StateLong:0|,StateComplete:0|,Threads:0|,Time:0|,TimeStamp:0|,User:0|,UserLong:0|,Version:0|,Weight:0'
run sinfo -O 'AllocMem,AllocNodes,Available,Cluster,Comment,Cores,CPUs,CPUsLoad,CPUsState,DefaultTime,Disk,Extra,Features,features_act,FreeMem,Gres,GresUsed,Groups,MaxCPUsPerNode,Memory,NodeAddr,NodeAI,NodeAIOT' -p nosuch
run sinfo -O 'NodeHost,NodeList,Nodes,OverSubscribe,Partition,PartitionName,Port,PreemptMode,PriorityJobFactor,PriorityTier,Reason,Root,Size,SocketCoreThread,Sockets,StateCompact,StateLong,StateComplete,Threads,Time,TimeStamp,User,UserLong,Version,Weight' -p nosuch
run sinfo -o '%R|%s|%h|%B|%L|%l|%M|%p|%I|%g|%r|%S|%a|%V|%A|%F|%C'
run sh -c "sinfo -o %all | head -1"
run sh -c "sinfo -O All | head -1"
# unknown names and letters
run sinfo -O 'nodelist:12,bogus,Priority,nodel,cpus:3' -p short
run_literal sinfo -O ''
run sinfo -o '%P %x %#N %5.3D|%.3a' -p short
# -l refuses -o and -O; SINFO_FORMAT stands in for -o unless -N, -s or -R pick their format
run sinfo -l -o '%P'
run sinfo -O nodelist --long
run env SINFO_FORMAT='%R %D %t' sinfo
run sh -c "SINFO_FORMAT='%R %D %t' sinfo -l | tail -n +2"
run sh -c "SINFO_FORMAT='%R %D %t' sinfo -N | sort"
run env SINFO_FORMAT='%R %D %t' sinfo -s
run env SINFO_FORMAT='%R %D %t' sinfo -R
run env SINFO_FORMAT='%R %D %t' sinfo -o '%N'
run env SINFO_FORMAT='%R %D %t' sinfo -O partitionname:7,nodes:3
# partitions none of whose nodes pass a filter still get a line when the format names them
run sinfo -t drain -o '%P|%D|%c|%m|%t|%N|%E|%z'
run sinfo -t drain -o '%l|%D|%N'
run sinfo -R -o '%P|%N'
run sinfo -n node3 -O partition:8,nodes:3,statecompact:7,nodelist
run sh -c "sinfo -R -l | tail -n +2"
run scontrol update NodeName=node3 State=RESUME
