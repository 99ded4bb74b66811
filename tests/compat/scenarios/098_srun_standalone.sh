# srun outside any allocation: it allocates a job (named after the command, no batch step)
# and runs step 0 in it. The task environment (labelled with -l, lines sorted), then task
# placement for block and cyclic distribution, --ntasks-per-node and -c on the 2-CPU nodes.
# Each srun waits for an empty queue first, so the next one is granted at once (otherwise it
# prints "srun: job N queued and waiting for resources") on the same, lowest-numbered nodes.
run_sorted srun -N2 -n3 -l bash -c 'env | grep -E "^(SLURM|SRUN_|TMPDIR=|PMI_)"'
wait_queue_empty
script where.sh <<'S'
#!/bin/bash
echo "task $SLURM_PROCID on $SLURMD_NODENAME local $SLURM_LOCALID node $SLURM_NODEID gtids $SLURM_GTIDS step_tpn $SLURM_STEP_TASKS_PER_NODE tpn $SLURM_TASKS_PER_NODE job_cpn $SLURM_JOB_CPUS_PER_NODE cpus_on_node $SLURM_CPUS_ON_NODE ntasks $SLURM_NTASKS nnodes $SLURM_NNODES dist ${SLURM_DISTRIBUTION-unset} cpt ${SLURM_CPUS_PER_TASK-unset}"
S
for args in "-N2 -n2" "-N2 -n3" "-N2 -n4" "-N2 -n3 -m block" "-N2 -n3 -m cyclic" "-N2 -n4 -m cyclic" \
            "-N3 -n5" "-N3 -n5 -m cyclic" "-n3" "-N2 --ntasks-per-node=1" "-N2 --ntasks-per-node=2" \
            "--ntasks-per-node=1 -n3" "-n2 -c2" "-N2 -n2 -c2" "-n1 --mem=100" "-N2 -n3 --mem=100"; do
  # shellcheck disable=SC2086
  run_sorted srun $args ./where.sh
  wait_queue_empty
done
# the job srun made (named after the command, BatchFlag=0), once it has finished
run srun -N2 -n3 printenv SLURM_JOB_ID
J=$(head -n 1 <<<"$OUT")
wait_done "$J"
fields "$J" JobName JobState ExitCode BatchFlag NumNodes NumCPUs NumTasks CPUs/Task NodeList Command
