# cluster: unlike-nodes
# Unlike nodes (node2: 4 CPUs in 2 sockets, 2000 MB, TmpDisk 100, Weight 5; node3: feature
# "big"): without -e sinfo lists sizes of a line's nodes as the smallest and '+', with -e/--exact
# nodes whose shown sizes differ get lines of their own; features and states always split.
wait_nodes_responding
run sinfo
run sinfo -e
run sinfo -o '%P|%c|%m|%d|%w|%z|%X|%Y|%Z|%D|%N'
run sinfo -e -o '%P|%c|%m|%d|%w|%z|%X|%Y|%Z|%D|%N'
run sinfo --exact -o '%R|%Z|%D|%N'
run sinfo -o '%P|%c|%f|%b|%N'
run sinfo -e -O partition:8,cpus:5,memory:6,socketcorethread:7,nodelist
run sinfo -O partition:8,cpus:5,memory:6,disk:5,weight:5,nodelist
run sh -c "sinfo -N -l | tail -n +2 | sort"
run sh -c "sinfo -l | tail -n +2"
run sinfo -s
run sh -c "scontrol show node node2 | grep -o 'Sockets=[0-9]*\|TmpDisk=[0-9]* Weight=[0-9]*\|CPUTot=[0-9]*'"
# a job on node2 makes it mixed: the state splits the line, AllocMem too
run sbatch -w node2 -c 2 --mem=500 -J half --wrap 'sleep 60'
A=$J
wait_state "$A" RUNNING
run sinfo -o '%P|%c|%t|%N'
run sinfo -O partition:8,allocmem:9,cpusstate:14,nodelist
run sinfo -e -o '%R|%m|%C|%N'
run scancel "$A"
# partition "odd": every partition setting sinfo shows differs from the others'
run sinfo -o '%R|%s|%h|%B|%L|%l|%M|%p|%I|%g|%r|%S|%a|%D|%N' -p odd,short
run sinfo -O partitionname:6,size:5,oversubscribe:8,maxcpuspernode:3,defaulttime:6,time:11,preemptmode:8,prioritytier:2,priorityjobfactor:2,groups:5,root:4,allocnodes:6,available:6 -p odd
run sh -c "scontrol show partition odd | grep -E 'Allow|AllocNodes|MaxCPUsPerNode|PreemptMode'"
