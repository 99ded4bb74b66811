# scontrol update NodeName=... State=DRAIN|RESUME|DOWN|UNDRAIN Reason=...: who may, what is
# refused, what sinfo and scontrol show, what happens to jobs on the nodes.
run scontrol update NodeName=node3 State=DRAIN
run scontrol update NodeName=node3 State=DRAIN Reason="maint window"
run sinfo
run sinfo -R -o '%20E %9u %N'
run sh -c "scontrol -o show node node3 | grep -o 'State=[^ ]*\\|Reason=.*'"
run_as "$OTHER_USER" scontrol update NodeName=node2 State=DRAIN Reason=mine
run scontrol update NodeName=nosuch State=DRAIN Reason=x
run scontrol update NodeName=node3 State=bogus
run sbatch -w node3 -J pinned --wrap true
P=$J
wait_field "$P" Reason "ReqNodeNotAvail,_UnavailableNodes:node3"
fields "$P" JobState Reason
run scontrol update NodeName=node3 State=RESUME
wait_done "$P"
fields "$P" JobState
run scontrol update NodeName=node3 State=RESUME
run sbatch -w node2 -J busy --wrap 'sleep 30'
B=$J
wait_state "$B" RUNNING
run scontrol update NodeName=node2 State=DRAIN Reason=later
run sinfo -N -o '%N %t %E'
run scontrol update NodeName=node2 State=UNDRAIN
run sinfo -N -n node2 -o '%N %E'
run scontrol update NodeName=node2 State=DOWN Reason=broken
wait_state "$B" "PENDING|NODE_FAIL|REQUEUED|CANCELLED|FAILED"
fields "$B" JobState Restarts
# (Slurm's test cluster has ReturnToService=2: its slurmd brings node2 back by itself, so
# what sinfo shows next differs by configuration, not behaviour)
quiet scontrol update NodeName=node2 State=RESUME
run scancel "$B"
run scontrol update NodeName=node[1-2] State=DRAIN Reason=both
run sinfo -R
run scontrol update NodeName=node[1-2] State=RESUME
