# srun -E (--preserve-env) in a batch job: the tasks see the job's SLURM_NTASKS and
# SLURM_JOB_NUM_NODES rather than the step's -N1 -n1. srun -I (--immediate) when the nodes are taken.
script job.sh <<'S'
#!/bin/bash
for e in "" -E; do
  srun $e -N1 -n1 sh -c 'echo $SLURM_NTASKS $SLURM_NPROCS $SLURM_NNODES $SLURM_JOB_NUM_NODES $SLURM_STEP_NUM_TASKS $SLURM_STEP_NUM_NODES'
  echo "exit $?"
done
S
submit -N2 -n4 -o job.out job.sh
wait_done "$J"
show_file job.out
submit --parsable -N3 --wrap 'sleep 30'
B=$J
wait_state "$B" RUNNING
run srun -I -N3 true
run srun --immediate=1 -N3 true
# (Slurm prints its two lines in either order)
run_sorted salloc -I -N3 true
run scancel "$B"
# every node idle again (a cancelled job's nodes are busy a moment after the queue empties)
quiet sh -c 'for i in $(seq 100); do [ "$(sinfo -h -o %t | sort -u)" = idle ] && exit 0; sleep 0.1; done'
