# srun inside a batch job (sbatch -N2 -n4 on 2-CPU nodes: 2(x2)): the environment of every
# task of a step that fills the allocation, and of task 0 of steps that use part of it (one
# node: SLURM_NNODES changes, SLURM_NODELIST does not; -c2: SLURM_CPUS_PER_TASK, 1 task per
# node, default distribution cyclic; -m cyclic). Also the batch shell's own environment, for
# what srun changes and what it inherits. Every task writes its own file.
script job.sh <<'S'
#!/bin/bash
# a step's CPUs are free again only once squeue -s no longer lists it; a step started before
# that prints "step creation temporarily disabled" first
settle() {
  local i
  for i in $(seq 100); do
    squeue -h -s -j "$SLURM_JOB_ID" -o %i | grep -qv batch || return 0
    sleep 0.1
  done
}
env > batch.env
srun -N2 -n4 bash -c 'env > step0.task$SLURM_PROCID.env'
echo "step 0 exit $?"
settle
srun -N1 -n2 bash -c 'env > step1.task$SLURM_PROCID.env'
echo "step 1 exit $?"
settle
srun -n2 -c2 bash -c 'env > step2.task$SLURM_PROCID.env'
echo "step 2 exit $?"
settle
srun -n3 -m cyclic bash -c 'env > step3.task$SLURM_PROCID.env'
echo "step 3 exit $?"
S
submit -N2 -n4 -o job.out job.sh
wait_done "$J"
fields "$J" JobState ExitCode NodeList NumCPUs NumTasks
show_file job.out
show_env batch.env TMPDIR SRUN_DEBUG 'PMI_[A-Z_]*'
for f in step0.task0 step0.task1 step0.task2 step0.task3 step1.task0 step1.task1 step2.task0 step2.task1 step3.task0 step3.task1 step3.task2; do
  show_env "$f.env" TMPDIR SRUN_DEBUG 'PMI_[A-Z_]*'
done
