# sinfo's views: default, -s, -N, -l, -N -l, -R, -o codes, and the -p -t -n -r -d filters,
# with a node running a job (mixed) and a drained node.
run sbatch -w node2 -n1 -J busy --wrap 'sleep 60'
B=$J
wait_state "$B" RUNNING
run scontrol update NodeName=node3 State=DRAIN Reason=disk
run sinfo
run sinfo -s
# (-N: Slurm's order of one node's partitions is not stable; sorted here)
run sh -c "sinfo -N | sort"
run sh -c "sinfo -l | tail -n +2"
run sh -c "sinfo -N -l | tail -n +2 | sort"
run sinfo -R
run sinfo -o '%P|%a|%l|%D|%t|%T|%N|%c|%m|%C|%F|%s|%r|%h|%g|%z|%d|%w|%f|%G|%E|%X|%Y|%Z|%R'
run sinfo -h -p short
run sinfo -h -t idle
run sinfo -h -t drain,mix -o '%P %t %N'
run sh -c "sinfo -h -n node[2-3] -N -o '%N %P %t' | sort"
run sh -c "sinfo -h -r -o '%N %t' | sort"
run sinfo -h -d
run sinfo -h -p nosuch
run scancel "$B"
run scontrol update NodeName=node3 State=RESUME
